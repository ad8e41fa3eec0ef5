// `apptracer diagnose TRACE [--system FILE] [--format table|csv|json] [-o FILE] [--all] [--store] [--analyses]`:
// what to fix, with what it costs and what fixing it saves.
#include <algorithm>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "analyzer/diagnose/analyses.h"
#include "analyzer/commands.h"
#include "analyzer/diagnose/findings_output.h"
#include "analyzer/diagnose/findings_store.h"
#include "analyzer/diagnose/link_model_choice.h"
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
  std::shared_ptr<trace::StepSelection> steps;
};

int run_diagnose(const DiagnoseOptions& options) {
  trace::Trace trace(options.trace,
                     options.store ? TraceAccess::ReadWrite : TraceAccess::ReadOnly);
  if (options.store) refuse_store_while_recording(options.trace, trace.db(), options.output->force);
  PrintedOutput printed(*options.output, {options.trace, options.system});
  std::ostream& out = printed.stream();
  Progress progress("diagnose");
  if (options.steps->any()) {
    progress.phase("finding steps");
    trace.limit_to_steps(*options.steps);
  }
  diagnose::TraceFacts facts;
  try {
    facts = diagnose::read_trace_facts(trace, &progress);
  } catch (const SqliteError& error) {
    throw TraceError(options.trace + ": damaged or incomplete trace (" + error.what() + ")");
  }
  diagnose::LinkModel model = diagnose::choose_link_model(facts, options.system);
  diagnose::Thresholds limits;
  progress.phase("rules");
  std::vector<diagnose::Finding> findings = diagnose::diagnose(facts, *model.cost, limits);
  if (options.store) {
    progress.phase("storing the findings");
    try {
      diagnose::store_findings(trace.db(), findings);
    } catch (const SqliteError& error) {
      throw TraceError(options.trace + ": cannot store the findings (" + error.what() +
                       "); run without --store");
    }
  }
  std::vector<Table> analyses;
  if (options.analyses) {
    progress.phase("analyses");
    analyses = diagnose::all_analyses(facts, limits);
  }
  progress.finish();
  size_t shown = options.all ? SIZE_MAX : diagnose::kShownFindings;
  std::vector<std::string> notes = diagnose::diagnosis_notes(facts);
  OutputFormat format = parse_output_format(options.output->format);
  if (format == OutputFormat::Json) {
    nlohmann::json document{{"trace", options.trace},
                       {"time_origin", facts.origin.describe()},
                       {"link_model", model.name},
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
    out << "apptracer diagnose " << options.trace << " (savings from " << model.name
              << "; " << facts.origin.describe() << ")\n";
    for (const std::string& note : notes) out << "note: " << note << "\n";
    diagnose::write_findings_text(out, findings, shown);
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
  options->steps = step_options(cmd);
  cmd->callback([&result, options] {
    result = [options] { return reading_trace(options->trace, [&] { return run_diagnose(*options); }); };
  });
}

}  // namespace apptracer
