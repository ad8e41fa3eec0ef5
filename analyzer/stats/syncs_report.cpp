// Synchronizations by kind: the host time each kind kept the calling thread
// blocked (end - start of the synchronizing call).
#include <map>

#include "apptracer/enums.h"
#include "analyzer/stats/duration_summary.h"
#include "analyzer/stats/stats_reports.h"

namespace apptracer {

Table syncs_report(trace::Trace& trace) {
  std::map<SyncKind, std::vector<int64_t>> durations;
  for (const trace::Sync& wait : trace.operations().syncs()) {
    const auto& sync = wait.row();
    durations[sync.kind].push_back(saturating_sub(sync.end_ns, sync.start_ns));
  }
  Table table{"syncs", {"kind", "count"}, {}};
  table.columns.insert(table.columns.end(), std::begin(kDurationColumns), std::end(kDurationColumns));
  for (auto& [kind, values] : durations) {
    DurationSummary summary = summarize_durations(values);
    std::vector<Cell> row{std::string(to_string(kind)), summary.count};
    append_duration_cells(row, summary);
    table.rows.push_back(std::move(row));
  }
  return table;
}

}  // namespace apptracer
