// Pricing against a step the user measured without tracing
// (--untraced-step). What links and the trace's own timing take off
// (untraced.h) leaves what tracing costs the program's own code between its
// CUDA calls: colder caches after CUPTI's and the tracer's code ran (a
// PyTorch step's Python and dispatcher work ran ~18% slower traced). That
// follows the program's cache behaviour, which no loop on the machine stands
// in for, so the step measured untraced is the only sure measure of it: the
// host's own time before each call is scaled by one factor, found so that
// the baseline's steady step takes that time, and the what-if gets the same
// factor. A change that removes host time (a CUDA graph) then saves what it
// would save untraced; one that keeps it (pinned copies) saves what it saves
// from the traced step less the known costs.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "analyzer/trace/steps.h"
#include "analyzer/whatif/replay_graph.h"
#include "analyzer/whatif/replay_input.h"
#include "analyzer/whatif/replay_timeline.h"

namespace apptracer::whatif {

// Multiplies the host's own time before each call by `factor`: its gap after
// the thread's previous call, or after the call that woke it.
void scale_program_host_time(const ReplayInput& input, double factor, NodeTiming& t);

struct FittedHostTime {
  double factor = 1;
  int64_t step_ns = 0;  // the baseline's steady step with it
  bool reached = true;  // within 1% of the target; false: the nearest the factor's range reaches
};

// Tracing may also have been over-corrected: the untraced step slower than
// the baseline. Past this the given step is not the trace's program.
inline constexpr double kMostHostScale = 4;

// The factor in [0, kMostHostScale] at which `step_ns` (the baseline's
// steady step, replayed with the host's own time so scaled; non-decreasing
// in it) comes within 0.1% of `target_ns`, by false position; or the nearest.
FittedHostTime fit_program_host_time(int64_t target_ns, const std::function<int64_t(double)>& step_ns);

// The factor for the baseline `timing` (tracing's known costs already off)
// replayed over `graph`, its steady step measured over `steps`. Throws
// TraceError naming `trace_path` where the process has no steady step.
FittedHostTime fit_to_untraced_step(const ReplayInput& input, const ReplayGraph& graph,
                                    const trace::ProcessSteps* steps, int64_t untraced_step_ns,
                                    const NodeTiming& timing, const std::string& trace_path);

// The what-if's note on it: the factor, and what tracing had cost the
// program's own host time by it.
std::string untraced_step_note(const FittedHostTime& fitted, int64_t untraced_step_ns);

}  // namespace apptracer::whatif
