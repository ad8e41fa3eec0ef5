// The one convention for the times the analyzer shows: integer nanoseconds
// since the trace's start, which is when its tracer started (meta start_ns;
// for a merged trace, its earliest process's start). Every output that
// shows times says so with describe(). Times stored back into the trace
// (dvdg_ops, whatif_critical_path) stay on the trace's own clock, as its
// rows' are, so that they join.
#pragma once

#include <cstdint>
#include <string>

#include "analyzer/trace/processes.h"
#include "apptracer/saturating.h"

namespace apptracer::trace {

struct TimeOrigin {
  int64_t ns = 0;         // on the trace's clock
  bool recorded = false;  // false: the trace says no start; times are shown as recorded

  int64_t since(int64_t trace_ns) const { return saturating_sub(trace_ns, ns); }
  // One line for an output's header: what its times count from.
  std::string describe() const;
};

TimeOrigin time_origin(const TraceProcesses& processes);

}  // namespace apptracer::trace
