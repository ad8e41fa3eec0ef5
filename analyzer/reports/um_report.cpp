// `stats --report um`: unified memory, per managed allocation and per kernel.
// Both tables share one attribution of CUPTI's unified-memory records to
// kernels, prefetches and host phases (analyzer/um_attribution.h).
#include "analyzer/trace/trace.h"
#include "apptracer/enums.h"
#include "stats_reports.h"
#include "analyzer/trace/trace_file.h"

namespace apptracer {

namespace {

bool has_um_data(Database& db) {
  Statement rows = db.prepare(
      "SELECT EXISTS (SELECT 1 FROM allocations WHERE kind = ?) "
      "OR EXISTS (SELECT 1 FROM um_events) OR EXISTS (SELECT 1 FROM mem_advice) "
      "OR EXISTS (SELECT 1 FROM memcpys WHERE kind = ?)");
  rows.bind(1, static_cast<int64_t>(AllocKind::Managed))
      .bind(2, static_cast<int64_t>(CopyKind::Prefetch));
  return rows.step() && rows.int64(0) != 0;
}

}  // namespace

ReportOutput um_report(Database& db) {
  trace::Trace trace(db);
  if (!trace::has_um_columns(trace)) {
    return {{},
            "trace schema version " + trace_meta(db, "schema_version", "?") +
                " is too old for the um report (it needs version 2); record the program again"};
  }
  if (!has_um_data(db)) {
    return {{},
            "no unified memory in this trace: no managed allocations, migrations, faults, "
            "prefetches or advice"};
  }
  trace::UmTrace um = trace::read_um_trace(trace);
  // Migrations cost on-demand paging half its speed, so they are recorded
  // only when asked for: without them the tables hold no bytes moved.
  std::string counters = trace_meta(db, "um_counters", "");
  std::string note;
  if (counters.find("not asked for: bytes HtoD") != std::string::npos) {
    note = "migrations were not recorded (the default leaves them out: they slow on-demand "
           "migration); record --unified-memory all to see where pages moved";
  }
  return {{um_allocations_report(db, um), um_kernels_report(db, um)}, note};
}

}  // namespace apptracer
