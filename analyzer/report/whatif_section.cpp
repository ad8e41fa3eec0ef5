#include "analyzer/report/whatif_section.h"

#include <exception>
#include <vector>

#include "analyzer/diagnose/findings_output.h"
#include "analyzer/trace/framework.h"
#include "analyzer/whatif/whatif.h"
#include "analyzer/whatif/whatif_report.h"
#include "apptracer/tables.h"

namespace apptracer::report {

namespace {

using nlohmann::json;

std::string joined(const std::vector<std::string>& words) {
  std::string text;
  for (const std::string& word : words) text += (text.empty() ? "" : " ") + word;
  return text;
}

bool has_managed_memory(trace::Trace& trace) {
  for (const trace::Allocation& allocation : trace.operations().allocations()) {
    if (allocation.kind() == AllocKind::Managed) return true;
  }
  return false;
}

}  // namespace

json whatif_runs(trace::Trace& trace, const std::string& system_file, std::optional<int64_t> untraced_step_ns) {
  if (system_file.empty()) return nullptr;
  std::vector<whatif::WhatifOptions> scenarios(4);
  // PyTorch's fix for pageable uploads is pin_memory=True with
  // non_blocking=True: pinned, its copies also drop their own wait.
  bool pytorch = trace::detect_framework(trace) == trace::Framework::Pytorch;
  scenarios[1].pin = true;
  scenarios[1].non_blocking = pytorch;
  scenarios[2].overlap = true;
  scenarios[3].pin = scenarios[3].overlap = true;
  scenarios[3].non_blocking = pytorch;
  if (has_managed_memory(trace)) scenarios.emplace_back().prefetch_managed = true;
  json runs = json::array();
  json out = {{"system", system_file}};
  for (whatif::WhatifOptions& options : scenarios) {
    options.system_path = system_file;
    options.untraced_step_ns = untraced_step_ns;
    std::string changes = joined(options.describe());
    try {
      whatif::WhatifResult result = whatif::run_whatif(trace, options);
      json tables = json::array();
      for (const Table& table : whatif::whatif_tables(result)) tables.push_back(diagnose::table_json(table));
      json phases = json::array();
      for (const whatif::Phase& phase : result.phases) {
        phases.push_back({{"name", phase.name}, {"count", phase.count}, {"recorded_ns", phase.ns[0]},
                          {"predicted_ns", phase.ns[2]}});
      }
      runs.push_back({{"changes", changes},
                      {"predicted_ns", result.predicted_ns},
                      {"baseline_ns", result.baseline_ns},
                      {"phases", phases},
                      {"tables", tables},
                      {"notes", result.notes}});
      out["system"] = result.system;
      out["recorded_on"] = result.recorded_on;
      out["recorded_ns"] = result.recorded_ns;
    } catch (const std::exception& error) {
      runs.push_back({{"changes", changes}, {"error", error.what()}});
    }
  }
  out["scenarios"] = runs;
  return out;
}

json stored_whatif_tables(Database& db) {
  json tables = json::array();
  for (const TableInfo* table : tables_with_role(TableRole::Analysis)) {
    const std::string& name = table->name;
    if (name.rfind("whatif", 0) != 0 || !db.has_table(name)) continue;
    Statement rows = db.prepare("SELECT * FROM \"" + name + "\" LIMIT 500");
    json columns = json::array(), data = json::array();
    for (int c = 0; c < rows.column_count(); ++c) columns.push_back(rows.column_name(c));
    while (rows.step()) {
      json row = json::array();
      for (int c = 0; c < rows.column_count(); ++c) {
        switch (rows.column_type(c)) {
          case 1: row.push_back(rows.int64(c)); break;    // SQLITE_INTEGER
          case 2: row.push_back(rows.real(c)); break;     // SQLITE_FLOAT
          case 5: row.push_back(nullptr); break;          // SQLITE_NULL
          default: row.push_back(rows.text(c)); break;
        }
      }
      data.push_back(std::move(row));
    }
    tables.push_back({{"name", name}, {"columns", columns}, {"rows", data}});
  }
  return tables;
}

}  // namespace apptracer::report
