#include "analyzer/diff/framework_profile.h"

#include <algorithm>
#include <string>

#include "analyzer/stats/stats_reports.h"
#include "apptracer/saturating.h"

namespace apptracer::diff {

namespace {

// The cell of `row` in the column named `name` (the reports' columns, by name).
const Cell& cell(const Table& table, const std::vector<Cell>& row, const std::string& name) {
  auto at = std::find(table.columns.begin(), table.columns.end(), name);
  return row[static_cast<size_t>(at - table.columns.begin())];
}

int64_t integer(const Cell& cell) { return std::holds_alternative<int64_t>(cell) ? std::get<int64_t>(cell) : 0; }
std::string text(const Cell& cell) { return std::holds_alternative<std::string>(cell) ? std::get<std::string>(cell) : ""; }

void add_rows(Profile& profile, const ReportOutput& report, const std::string& category) {
  for (const Table& table : report.tables) {
    for (const std::vector<Cell>& row : table.rows) {
      std::string name = text(cell(table, row, category));
      if (category == "module") {
        std::string phase = text(cell(table, row, "phase"));
        if (!phase.empty()) name += " (" + phase + ")";
      }
      std::vector<int64_t>& entry = profile.entry({category, name, ""});
      entry[0] = saturating_add(entry[0], integer(cell(table, row, "launches")));
      entry[1] = saturating_add(entry[1], integer(cell(table, row, "gpu_ns")));
    }
  }
}

}  // namespace

bool names_modules_and_ops(trace::Trace& trace) { return trace::has_framework_ranges(trace); }

Profile framework_profile(trace::Trace& trace) {
  Profile profile;
  profile.measures = {"launches", "time_ns"};
  if (!names_modules_and_ops(trace)) return profile;
  auto [modules, ops] = modules_and_ops_reports(trace);
  add_rows(profile, modules, "module");
  add_rows(profile, ops, "op");
  return profile;
}

}  // namespace apptracer::diff
