// Pricing against the untraced program. A trace's host times hold what
// tracing added to each call (CUPTI's callbacks and the tracer's); a saving
// taken from the traced times counts that as if the change removed it too:
// on a launch-bound PyTorch step replayed as a CUDA graph, the saving was
// the traced step's 7.6 ms less the graph's 3.6 ms where the untraced step
// took 5.6 ms. Where the system file measured what tracing adds to a launch
// (model/tracing_cost.h) on the machine the trace was recorded on, every
// replay first takes it off each kernel launch call: the baseline is then
// the untraced program's, and so is each saving.
#pragma once

#include <cstdint>

#include "analyzer/whatif/replay_input.h"
#include "analyzer/whatif/replay_timeline.h"

namespace apptracer::whatif {

// Takes `per_launch_ns` off each call that launched a kernel (graph
// launches aside: the loop measured kernel launches), from the host's time
// before the call first, then from the call itself, never below 0; work the
// call issued is issued by its (earlier) end at the latest. Returns how many
// calls it shortened.
int64_t remove_tracing_cost(const ReplayInput& input, int64_t per_launch_ns, NodeTiming& t);

}  // namespace apptracer::whatif
