// `apptracer diff A B [--json|--csv] [--step NAME] [--no-dvdg]`: two traces
// of one program (before and after a change, or two ranks) compared per
// kernel name, copy path, memset, allocation kind and collective, per NVTX
// range, per step, and per DVDG producer; B minus A, largest change first.
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "commands.h"
#include "dvdg_profile.h"
#include "nvtx_profile.h"
#include "operations_profile.h"
#include "profile_diff.h"
#include "step_profile.h"
#include "table_format.h"
#include "analyzer/trace/trace.h"

namespace apptracer {

namespace {

struct DiffOptions {
  std::string a;
  std::string b;
  std::string step;
  bool json = false;
  bool csv = false;
  bool no_dvdg = false;
};

// One trace, opened and read where an error names it.
class DiffInput {
 public:
  explicit DiffInput(const std::string& path) : path_(path) {
    read([&] { trace_.emplace(path, TraceAccess::ReadOnly); });
  }
  trace::Trace& trace() { return *trace_; }

  template <typename Read>
  diff::Profile profile(Read&& read_profile) {
    diff::Profile profile;
    read([&] { profile = read_profile(*trace_); });
    return profile;
  }

 private:
  template <typename Work>
  void read(Work&& work) {
    reading_trace(path_, [&] {
      work();
      return 0;
    });
  }

  std::string path_;
  std::optional<trace::Trace> trace_;
};

// Both traces' profiles of one kind, compared.
template <typename Read>
Table compare(const char* name, DiffInput& a, DiffInput& b, Read&& read_profile, const char* impact) {
  return diff::diff_profiles(name, a.profile(read_profile), b.profile(read_profile), impact);
}

int run_diff(const DiffOptions& options) {
  DiffInput a(options.a), b(options.b);
  std::vector<Table> tables{compare("operations", a, b, diff::operations_profile, "time_ns"),
                            compare("nvtx_ranges", a, b, diff::nvtx_profile, "time_ns")};
  std::optional<std::string> step = options.step;
  if (step->empty()) step = diff::step_range(a.trace(), b.trace());
  if (step) {
    tables.push_back(compare(
        "steps", a, b, [&](trace::Trace& trace) { return diff::step_profile(trace, *step); },
        "time_ns"));
  }
  if (!options.no_dvdg) tables.push_back(compare("dvdg", a, b, diff::dvdg_profile, "edges"));
  if (options.json) {
    write_tables(std::cout, tables, OutputFormat::Json);
  } else if (options.csv) {
    write_tables(std::cout, tables, OutputFormat::Csv);
  } else {
    std::cout << "apptracer diff: A " << options.a << ", B " << options.b
              << " (diff: B minus A; times in ns; largest change first)\n";
    if (step) std::cout << "steps: NVTX range \"" << *step << "\", the Nth of A against the Nth of B\n";
    write_tables(std::cout, tables, OutputFormat::Table);
  }
  return 0;
}

}  // namespace

void add_diff_command(CLI::App& app, CommandResult& result) {
  auto* cmd = app.add_subcommand(
      "diff", "Compare two traces of one program (two runs, two ranks): what changed, largest first");
  auto options = std::make_shared<DiffOptions>();
  input_files(cmd->add_option("a", options->a, "Trace A (before)"))->required();
  input_files(cmd->add_option("b", options->b, "Trace B (after)"))->required();
  cmd->add_option("--step", options->step,
                  "NVTX range that marks a step (default: the outermost range both traces repeat)")
      ->type_name("NAME");
  auto* json = cmd->add_flag("--json", options->json, "Print JSON");
  cmd->add_flag("--csv", options->csv, "Print CSV")->excludes(json);
  cmd->add_flag("--no-dvdg", options->no_dvdg, "Leave out the data-flow graph's comparison");
  cmd->callback([&result, options] {
    result = [options] { return run_diff(*options); };
  });
}

}  // namespace apptracer
