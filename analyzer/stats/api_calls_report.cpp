// API calls by (domain, function): how often the program called each one and
// how long the host spent inside it (end - start). Driver calls a runtime call
// made are listed under the driver domain, so domains are not added together.
#include <algorithm>
#include <map>
#include <utility>

#include "apptracer/enums.h"
#include "analyzer/stats/duration_summary.h"
#include "analyzer/stats/stats_reports.h"

namespace apptracer {

Table api_calls_report(trace::Trace& trace) {
  // Grouped by interned name id; the text is looked up once per group.
  std::map<std::pair<ApiDomain, int64_t>, std::vector<int64_t>> by_name_id;
  for (const trace::Packed<ApiCallRow>& call : trace.rows<ApiCallRow>()) {
    by_name_id[{call.domain, call.name_id}].push_back(saturating_sub(call.end_ns, call.start_ns));
  }
  std::map<std::pair<ApiDomain, std::string>, std::vector<int64_t>> durations;
  for (auto& [key, values] : by_name_id) {
    auto& group = durations[{key.first, std::string(trace.string(key.second, "?"))}];
    group.insert(group.end(), values.begin(), values.end());
  }

  std::vector<std::pair<std::pair<ApiDomain, std::string>, DurationSummary>> summaries;
  for (auto& [key, values] : durations) summaries.emplace_back(key, summarize_durations(values));
  std::stable_sort(summaries.begin(), summaries.end(),
                   [](const auto& a, const auto& b) { return a.second.total > b.second.total; });

  Table table{"api", {"domain", "name", "count"}, {}};
  table.columns.insert(table.columns.end(), std::begin(kDurationColumns), std::end(kDurationColumns));
  for (const auto& [key, summary] : summaries) {
    std::vector<Cell> row{std::string(to_string(key.first)), key.second,
                          summary.count};
    append_duration_cells(row, summary);
    table.rows.push_back(std::move(row));
  }
  return table;
}

}  // namespace apptracer
