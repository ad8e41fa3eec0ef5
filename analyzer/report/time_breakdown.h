// Where a trace's time went, for the report: when the program's GPU work
// and its steady steps ran (the timeline shows those, not the tracer's
// start-up) and how long each kind of work took over the whole run.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>

#include "analyzer/diagnose/trace_facts.h"
#include "analyzer/report/unified_memory_moves.h"
#include "analyzer/trace/trace.h"

namespace apptracer::report {

// From the first GPU work's start (kernel, copy, memset, migration) to the
// last one's end; the trace's whole span when it has none.
struct WorkWindow {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
};
WorkWindow work_window(const diagnose::TraceFacts& facts, const std::vector<Migration>& moves);

// From the first steady step's start to the last step's end, over every
// process with steps (the steady state the first screen describes), or the
// steps the trace is limited to (--steps, --steady); none when no process
// has such a step.
std::optional<WorkWindow> steady_window(trace::Trace& trace);

// Rows {"what", "side" (GPU or host), "ns"}, largest first: GPU time of
// kernels, copies, memsets and migrations, the host's time in
// synchronizations and allocating calls, the start-up before the first GPU
// work and the GPU's idle time inside the work window. They overlap (the
// host waits while the GPU works): each is a share of the traced time.
nlohmann::json where_time_went(const diagnose::TraceFacts& facts, const std::vector<Migration>& moves);

}  // namespace apptracer::report
