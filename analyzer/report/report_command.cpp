// `apptracer report TRACE [-o report.html] [--system FILE] [--compare B]
// [--steps A-B | --steady]`:
// one self-contained HTML page (opens offline) with the steady-state step,
// what changed against B (--compare: `apptracer diff TRACE B`'s changed
// rows) and diagnose's findings first, then, collapsed, the rest of the
// findings, memory, the whole run, kernels, transfers, timeline, the what-if
// predictions on FILE, NVTX, analyses and the DVDG.
#include <cstdio>
#include <memory>
#include <string>

#include "analyzer/commands.h"
#include "analyzer/output_file.h"
#include "analyzer/progress.h"
#include "analyzer/report/report_data.h"
#include "analyzer/report/report_page.h"
#include "analyzer/diff/trace_comparison.h"
#include "analyzer/trace/trace.h"

namespace apptracer {

namespace {

struct ReportOptions {
  std::string trace;
  std::string system;
  std::string compare;
  std::shared_ptr<OutputOptions> output;
  std::shared_ptr<trace::StepSelection> steps;
  std::shared_ptr<std::optional<int64_t>> untraced_step_ns;
};

std::string file_name(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

int run_report(const ReportOptions& options) {
  std::string output = options.output->path.empty() ? replace_extension(options.trace, ".html") : options.output->path;
  trace::Trace trace(options.trace, TraceAccess::ReadOnly);
  Progress progress("report");
  nlohmann::json data;
  try {
    data = report::report_data(trace, options.trace, options.system, *options.steps, *options.untraced_step_ns,
                               &progress);
  } catch (const SqliteError& error) {
    throw TraceError(options.trace + ": damaged or incomplete trace (" + error.what() + ")");
  }
  if (!options.compare.empty()) {
    progress.phase("comparing the traces");
    data["comparison"] = report::comparison_data(
        options.trace, options.compare, diff::compare_traces(options.trace, options.compare, {}));
  }
  progress.phase("writing the page");
  OutputFile file(output, {options.trace, options.compare}, options.output->force);
  file.stream() << report::report_html(data, file_name(options.trace));
  file.commit();
  progress.finish();
  std::fprintf(stderr, "apptracer: wrote %s (%zu finding(s)); open it in a browser\n", output.c_str(),
               data["findings"].size() + data["more_findings"].size());
  return 0;
}

}  // namespace

void add_report_command(CLI::App& app, CommandResult& result) {
  auto* cmd = app.add_subcommand("report", "Write one self-contained HTML report (diagnoses, plots, data-flow graph)");
  auto options = std::make_shared<ReportOptions>();
  input_files(cmd->add_option("trace", options->trace, "Trace database"))->required();
  options->output = written_files(cmd, "HTML file (default: the trace's name with .html)");
  input_files(cmd->add_option("--system", options->system,
                              "System file (apptracer links) for the savings and each path's peak"))
      ->type_name("FILE");
  input_files(cmd->add_option("--compare", options->compare,
                              "Another trace of the program (B): add `apptracer diff TRACE B`'s comparison"))
      ->type_name("B");
  options->steps = step_options(cmd);
  options->untraced_step_ns = untraced_step_option(cmd);
  cmd->callback([&result, options] {
    result = [options] { return reading_trace(options->trace, [&] { return run_report(*options); }); };
  });
}

}  // namespace apptracer
