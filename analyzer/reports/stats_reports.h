// The reports of `apptracer stats`: each reads a trace and returns its
// tables (most have one) whose numbers are defined in its own file. All durations are nanoseconds;
// bandwidths are GB/s (10^9 bytes per second, which is bytes per ns).
#pragma once

#include <string>
#include <vector>

#include "apptracer/sqlite.h"
#include "table.h"
#include "analyzer/trace/unified_memory.h"

namespace apptracer {

// What one report gives: its tables, or none and a one-line note saying why
// (a trace without unified-memory data has nothing for `--report um`).
struct ReportOutput {
  std::vector<Table> tables;
  std::string note;
};

struct StatsReport {
  const char* name;         // what --report takes
  const char* description;  // one line for --help
  ReportOutput (*compute)(Database& db);
  bool by_default = true;  // printed by `stats` without --report
};

// Every report, in the order `stats` prints them.
const std::vector<StatsReport>& stats_reports();

Table processes_report(Database& db);
Table api_calls_report(Database& db);
Table kernels_report(Database& db);
Table copies_report(Database& db);
Table memsets_report(Database& db);
Table allocations_report(Database& db);
Table buffers_report(Database& db);
Table syncs_report(Database& db);
Table streams_report(Database& db);
Table collectives_report(Database& db);
// Unified memory: um_allocations and um_kernels, or a note when the trace
// has no unified-memory data or predates it.
ReportOutput um_report(Database& db);
Table um_allocations_report(Database& db, const trace::UmTrace& um);
Table um_kernels_report(Database& db, const trace::UmTrace& um);
// A merged trace's collectives whose last rank arrived late: by how much,
// the others' wait, and what held it back; or a note when none is joined.
ReportOutput stragglers_report(Database& db);
// --exact: where the signature heuristic was wrong, per kernel name, or a
// note when the trace has no exact data.
ReportOutput exact_report(Database& db);
// Bytes in use per GPU and unified memory migrated over time.
Table memory_timeline_report(Database& db);

}  // namespace apptracer
