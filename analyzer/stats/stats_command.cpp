// `apptracer stats TRACE [--report NAME,...] [--format table|csv|json] [-o FILE]`:
// summaries in the spirit of `nsys stats`, from a trace opened read-only.
#include <algorithm>
#include <iostream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "analyzer/commands.h"
#include "analyzer/progress.h"
#include "analyzer/stats/stats_reports.h"
#include "analyzer/table/table_format.h"
#include "analyzer/trace/declared_tables.h"
#include "analyzer/trace/trace.h"

namespace apptracer {

namespace {

struct StatsOptions {
  std::string trace;
  std::vector<std::string> reports;
  std::shared_ptr<OutputOptions> output;
  std::shared_ptr<trace::StepSelection> steps;
};

int run_stats(const StatsOptions& options) {
  PrintedOutput out(*options.output, {options.trace});
  std::vector<const StatsReport*> selected;
  for (const StatsReport& report : stats_reports()) {
    bool wanted = options.reports.empty() && report.by_default;
    for (const std::string& name : options.reports) wanted = wanted || name == report.name;
    if (wanted) selected.push_back(&report);
  }
  trace::Trace trace(options.trace, TraceAccess::ReadOnly);
  trace::require_declared_tables(trace.db());
  Progress progress("stats");
  if (options.steps->any()) {
    progress.phase("finding steps");
    trace.limit_to_steps(*options.steps);
  }
  std::vector<Table> tables;
  std::vector<std::string> notes;
  for (size_t i = 0; i < selected.size(); ++i) {
    progress.update(selected[i]->name, static_cast<int64_t>(i),
                    static_cast<int64_t>(selected.size()));
    ReportOutput output = selected[i]->compute(trace);
    tables.insert(tables.end(), std::make_move_iterator(output.tables.begin()),
                  std::make_move_iterator(output.tables.end()));
    // A report that has nothing to say only says so when it was asked for;
    // a note two reports share (modules and ops: how their ops were
    // sampled) is said once.
    if (!output.note.empty() && !options.reports.empty() &&
        std::find(notes.begin(), notes.end(), output.note) == notes.end()) {
      notes.push_back(output.note);
    }
  }
  progress.finish();
  // On stderr, so CSV and JSON on stdout stay parseable.
  if (const trace::StepWindow* window = trace.window()) std::cerr << "note: limited to " << window->describe() << "\n";
  for (const std::string& note : notes) std::cerr << "note: " << note << "\n";
  write_tables(out.stream(), tables, parse_output_format(options.output->format));
  out.commit();
  return 0;
}

}  // namespace

void add_stats_command(CLI::App& app, CommandResult& result) {
  auto* cmd = app.add_subcommand("stats", "Summaries: API calls, kernels, copies, memory, syncs, streams");
  auto options = std::make_shared<StatsOptions>();
  input_files(cmd->add_option("trace", options->trace, "Trace database"))->required();
  std::vector<std::string> names;
  std::string help = "Reports to print (NAME,NAME or repeated; default all):";
  for (const StatsReport& report : stats_reports()) {
    names.push_back(report.name);
    help += std::string("\n  ") + report.name + ": " + report.description;
  }
  cmd->add_option("-r,--report", options->reports, help)->check(CLI::IsMember(names));
  options->output = printed_results(cmd);
  options->steps = step_options(cmd);
  cmd->callback([&result, options] { result = [options] {
      return reading_trace(options->trace, [&] { return run_stats(*options); });
    }; });
}

}  // namespace apptracer
