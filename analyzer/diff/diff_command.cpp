// `apptracer diff A B [--json|--csv] [--step NAME] [--no-dvdg]`: two traces
// of one program (before and after a change, or two ranks) compared
// (trace_comparison.h), printed as text, JSON or CSV.
#include <iostream>
#include <memory>
#include <string>

#include "analyzer/commands.h"
#include "analyzer/table/table_format.h"
#include "analyzer/diff/trace_comparison.h"

namespace apptracer {

namespace {

struct DiffOptions {
  std::string a;
  std::string b;
  diff::ComparisonOptions compare;
  bool json = false;
  bool csv = false;
  bool no_dvdg = false;
};

int run_diff(const DiffOptions& options) {
  diff::ComparisonOptions compare = options.compare;
  compare.dvdg = !options.no_dvdg;
  diff::TraceComparison comparison = diff::compare_traces(options.a, options.b, compare);
  if (options.json) {
    write_tables(std::cout, comparison.tables, OutputFormat::Json);
  } else if (options.csv) {
    write_tables(std::cout, comparison.tables, OutputFormat::Csv);
  } else {
    std::cout << "apptracer diff: A " << options.a << ", B " << options.b
              << " (diff: B minus A; times in ns; largest change first)\n";
    for (const std::string& note : comparison.notes) std::cout << note << "\n";
    write_tables(std::cout, comparison.tables, OutputFormat::Table);
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
  cmd->add_option("--step", options->compare.step,
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
