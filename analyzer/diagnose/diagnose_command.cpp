// `apptracer diagnose TRACE [--system FILE] [--format table|csv|json] [-o FILE] [--all] [--rows] [--store] [--analyses]`:
// what to fix, with what it costs and what fixing it saves.
#include <algorithm>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "analyzer/diagnose/diagnosis.h"
#include "analyzer/commands.h"
#include "analyzer/diagnose/findings_output.h"
#include "analyzer/diagnose/findings_store.h"
#include "analyzer/progress.h"
#include "analyzer/diagnose/rules.h"
#include "analyzer/table/table_format.h"
#include "analyzer/trace/trace.h"

namespace apptracer {

namespace {

struct DiagnoseOptions {
  std::string trace;
  std::string system;
  std::shared_ptr<OutputOptions> output;
  bool store = false;
  bool analyses = false;
  bool all = false;
  bool rows = false;
  bool whole_run = false;
  std::shared_ptr<trace::StepSelection> steps;
  std::shared_ptr<std::optional<int64_t>> untraced_step_ns;
};

int run_diagnose(const DiagnoseOptions& options) {
  trace::Trace trace(options.trace,
                     options.store ? TraceAccess::ReadWrite : TraceAccess::ReadOnly);
  if (options.store) refuse_store_while_recording(options.trace, trace.db(), options.output->force);
  PrintedOutput printed(*options.output, {options.trace, options.system});
  std::ostream& out = printed.stream();
  Progress progress("diagnose");
  diagnose::DiagnosisRequest request;
  request.system = options.system;
  request.steps = *options.steps;
  request.whole_run = options.whole_run;
  request.analyses = options.analyses;
  request.untraced_step_ns = *options.untraced_step_ns;
  diagnose::Diagnosis diagnosis;
  try {
    diagnosis = diagnose::diagnose_trace(trace, request, &progress);
  } catch (const SqliteError& error) {
    throw TraceError(options.trace + ": damaged or incomplete trace (" + error.what() + ")");
  }
  const std::vector<diagnose::Finding>& findings = diagnosis.findings;
  if (options.store) {
    progress.phase("storing the findings");
    try {
      diagnose::store_findings(trace.db(), findings);
    } catch (const SqliteError& error) {
      throw TraceError(options.trace + ": cannot store the findings (" + error.what() +
                       "); run without --store");
    }
  }
  const std::vector<Table>& analyses = diagnosis.analyses;
  progress.finish();
  size_t shown = options.all ? SIZE_MAX : diagnose::shown_by_default(findings);
  const std::vector<std::string>& notes = diagnosis.notes;
  OutputFormat format = parse_output_format(options.output->format);
  if (format == OutputFormat::Json) {
    nlohmann::json document{{"trace", options.trace},
                       {"time_origin", diagnosis.time_origin},
                       {"link_model", diagnosis.link_model},
                       {"findings", diagnose::findings_json(findings, shown)},
                       {"left_out", findings.size() - std::min(shown, findings.size())},
                       {"notes", notes}};
    for (const Table& table : analyses) document["analyses"].push_back(diagnose::table_json(table));
    out << document.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  } else if (format == OutputFormat::Csv) {
    // One plain table (a reader of CSV takes no comment lines); how many
    // were left out goes to standard error, as notes do.
    std::vector<Table> tables{diagnose::findings_table(findings, shown)};
    tables.insert(tables.end(), analyses.begin(), analyses.end());
    write_tables(out, tables, OutputFormat::Csv);
    size_t listed = std::min(shown, findings.size());
    std::cerr << "note: " << listed << " of " << findings.size() << " finding(s) listed"
              << (listed < findings.size() ? " (--all lists every one)" : "") << "\n";
  } else {
    out << "apptracer diagnose " << options.trace << " (savings from " << diagnosis.link_model
              << "; " << diagnosis.time_origin << ")\n";
    for (const std::string& note : notes) out << "note: " << note << "\n";
    diagnose::write_findings_text(out, findings, shown, options.rows);
    if (!analyses.empty()) {
      out << "\n";
      write_tables(out, analyses, OutputFormat::Table);
    }
    if (options.store) out << "\nstored in " << options.trace << " (diagnoses, diagnosis_rows)\n";
  }
  printed.commit();
  return 0;
}

}  // namespace

void add_diagnose_command(CLI::App& app, CommandResult& result) {
  auto* cmd = app.add_subcommand(
      "diagnose", "What to fix: findings with where, cost now, estimated saving and a fix");
  auto options = std::make_shared<DiagnoseOptions>();
  input_files(cmd->add_option("trace", options->trace, "Trace database"))->required();
  input_files(cmd->add_option("--system", options->system,
                              "System file (apptracer links) whose link model estimates savings; "
                              "default: the bandwidths measured in the trace"))
      ->type_name("FILE");
  options->output = printed_results(cmd);
  options->output->force_option->description(
      "Replace the output file if it exists; --store into a trace still being recorded");
  cmd->add_flag("--store", options->store,
                "Also store the findings in the trace (tables diagnoses, diagnosis_rows)");
  cmd->add_flag("--analyses", options->analyses,
                "Also print the Holistic Trace Analysis tables (temporal and idle breakdown, "
                "kernels, launches, overlap, bandwidth, queue length, kernel sequences)");
  cmd->add_flag("--all", options->all,
                "Show every finding (default: the " + std::to_string(diagnose::kShownFindings) +
                    " largest, and how many more)");
  cmd->add_flag("--rows", options->rows,
                "Also print each finding's trace rows (JSON and CSV always have them)");
  auto* whole_run = cmd->add_flag(
      "--whole-run", options->whole_run,
      "Look at the whole run, start-up included (default where the program has steps: the steady "
      "steps, with start-up one finding)");
  options->steps = step_options(cmd);
  options->untraced_step_ns = untraced_step_option(cmd);
  for (const char* step_option : {"--steps", "--steady"}) whole_run->excludes(cmd->get_option(step_option));
  cmd->callback([&result, options] {
    result = [options] { return reading_trace(options->trace, [&] { return run_diagnose(*options); }); };
  });
}

}  // namespace apptracer
