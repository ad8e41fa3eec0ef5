// `apptracer diff A B [--format table|csv|json] [-o FILE] [--step NAME] [--no-dvdg]`: two traces
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
  std::shared_ptr<OutputOptions> output;
  bool no_dvdg = false;
};

int run_diff(const DiffOptions& options) {
  diff::ComparisonOptions compare = options.compare;
  compare.dvdg = !options.no_dvdg;
  diff::TraceComparison comparison = diff::compare_traces(options.a, options.b, compare);
  PrintedOutput printed(*options.output, {options.a, options.b});
  OutputFormat format = parse_output_format(options.output->format);
  if (format == OutputFormat::Table) {
    printed.stream() << "apptracer diff: A " << options.a << ", B " << options.b
                     << " (diff: B minus A; times in ns; largest change first)\n";
    for (const std::string& note : comparison.notes) printed.stream() << note << "\n";
  }
  write_tables(printed.stream(), comparison.tables, format);
  printed.commit();
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
  options->output = printed_results(cmd);
  cmd->add_flag("--no-dvdg", options->no_dvdg, "Leave out the data-flow graph's comparison");
  cmd->callback([&result, options] {
    result = [options] { return run_diff(*options); };
  });
}

}  // namespace apptracer
