// The reports of `apptracer stats`: each reads a trace and returns one table
// whose numbers are defined in its own file. All durations are nanoseconds;
// bandwidths are GB/s (10^9 bytes per second, which is bytes per ns).
#pragma once

#include <vector>

#include "apptracer/sqlite.h"
#include "table.h"

namespace apptracer {

struct StatsReport {
  const char* name;         // what --report takes
  const char* description;  // one line for --help
  Table (*compute)(Database& db);
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

}  // namespace apptracer
