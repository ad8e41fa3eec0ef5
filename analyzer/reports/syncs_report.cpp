// Synchronizations by kind: the host time each kind kept the calling thread
// blocked (end - start of the synchronizing call).
#include <map>

#include "apptracer/enums.h"
#include "duration_summary.h"
#include "stats_reports.h"

namespace apptracer {

Table syncs_report(Database& db) {
  std::map<int64_t, std::vector<int64_t>> durations;
  Statement rows = db.prepare("SELECT kind, end_ns - start_ns FROM syncs");
  while (rows.step()) durations[rows.int64(0)].push_back(rows.int64(1));
  Table table{"syncs", {"kind", "count"}, {}};
  table.columns.insert(table.columns.end(), std::begin(kDurationColumns), std::end(kDurationColumns));
  for (auto& [kind, values] : durations) {
    DurationSummary summary = summarize_durations(values);
    std::vector<Cell> row{std::string(to_string(static_cast<SyncKind>(kind))), summary.count};
    append_duration_cells(row, summary);
    table.rows.push_back(std::move(row));
  }
  return table;
}

}  // namespace apptracer
