// API calls by (domain, function): how often the program called each one and
// how long the host spent inside it (end - start). Driver calls a runtime call
// made are listed under the driver domain, so domains are not added together.
#include <algorithm>
#include <map>
#include <utility>

#include "apptracer/enums.h"
#include "duration_summary.h"
#include "stats_reports.h"

namespace apptracer {

Table api_calls_report(Database& db) {
  // Grouped by interned name id; the text is looked up once per group.
  std::map<std::pair<int64_t, int64_t>, std::vector<int64_t>> by_name_id;
  Statement rows = db.prepare("SELECT domain, name_id, end_ns - start_ns FROM api_calls");
  while (rows.step()) by_name_id[{rows.int64(0), rows.int64(1)}].push_back(rows.int64(2));
  std::map<std::pair<int64_t, std::string>, std::vector<int64_t>> durations;
  Statement name = db.prepare("SELECT text FROM strings WHERE id = ?");
  for (auto& [key, values] : by_name_id) {
    name.bind(1, key.second);
    std::string text = name.step() ? name.text(0) : "?";
    name.reset();
    auto& group = durations[{key.first, text}];
    group.insert(group.end(), values.begin(), values.end());
  }

  std::vector<std::pair<std::pair<int64_t, std::string>, DurationSummary>> summaries;
  for (auto& [key, values] : durations) summaries.emplace_back(key, summarize_durations(values));
  std::stable_sort(summaries.begin(), summaries.end(),
                   [](const auto& a, const auto& b) { return a.second.total > b.second.total; });

  Table table{"api", {"domain", "name", "count"}, {}};
  table.columns.insert(table.columns.end(), std::begin(kDurationColumns), std::end(kDurationColumns));
  for (const auto& [key, summary] : summaries) {
    std::vector<Cell> row{std::string(to_string(static_cast<ApiDomain>(key.first))), key.second,
                          summary.count};
    append_duration_cells(row, summary);
    table.rows.push_back(std::move(row));
  }
  return table;
}

}  // namespace apptracer
