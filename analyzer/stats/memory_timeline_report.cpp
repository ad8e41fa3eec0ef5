// `stats --report memory_timeline`: the memory series the timeline draws as
// counter tracks (memory_series.h), a row per change, times since the trace's
// start. Printed only when asked for: a row per allocation and migration.
#include "analyzer/trace/trace.h"
#include "analyzer/trace/memory_series.h"
#include "analyzer/stats/stats_reports.h"

namespace apptracer {

Table memory_timeline_report(trace::Trace& trace) {
  Table table{"memory_timeline", {"pid", "series", "time_ns", "bytes"}, {}};
  for (const MemorySeries& series : read_memory_series(trace)) {
    int64_t pid = trace.process(series.process).pid;
    for (const auto& [ns, bytes] : series.points)
      table.rows.push_back({pid, series.name, trace.origin().since(ns), bytes});
  }
  return table;
}

}  // namespace apptracer
