// Pricing against the untraced program. A trace's host times hold what
// tracing added to each call (CUPTI's callbacks and the tracer's); a saving
// taken from the traced times counts that as if the change removed it too:
// on a launch-bound PyTorch step replayed as a CUDA graph, the saving was
// the traced step's 7.6 ms less the graph's 3.6 ms where the untraced step
// took 5.6 ms. Where the system file measured what tracing adds to a launch
// (model/tracing_cost.h) on the machine the trace was recorded on, every
// replay first takes it off each kernel launch call: the baseline is then
// the untraced program's, and so is each saving. A graph launch is dearer
// traced than that: CUPTI readies each node's kernel record (a JAX step's
// cuGraphLaunch of 104 nodes took 171 us traced, 2.2 us untraced): where the
// system file measured graph launches on that machine (model/graph_launch.h,
// untraced), each traced graph launch call is cut to that cost for its nodes.
#pragma once

#include <cstdint>

#include "analyzer/model/graph_launch.h"
#include "analyzer/whatif/replay_input.h"
#include "analyzer/whatif/replay_timeline.h"

namespace apptracer::whatif {

// What the recording machine's system file says tracing added to its calls.
struct TracingAdded {
  int64_t per_launch_ns = 0;                           // to each kernel launch call
  const model::GraphLaunch* graph_launch = nullptr;  // a graph launch's untraced cost; null: not measured
  bool any() const { return per_launch_ns > 0 || graph_launch; }
};

// How many calls remove_tracing_cost shortened, of each kind.
struct UntracedCalls {
  int64_t kernel_launches = 0;
  int64_t graph_launches = 0;
  bool any() const { return kernel_launches > 0 || graph_launches > 0; }
};

// Takes `per_launch_ns` off each call that launched a kernel, from the
// host's time before the call first, then from the call itself, never below
// 0; cuts each graph launch call that took longer than the measured untraced
// launch of its nodes to that. Work a call issued is issued by its (earlier)
// end at the latest.
UntracedCalls remove_tracing_cost(const ReplayInput& input, const TracingAdded& cost, NodeTiming& t);

}  // namespace apptracer::whatif
