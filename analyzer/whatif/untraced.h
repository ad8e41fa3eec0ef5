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
// Between its calls, the program's threads also ran the tracer's hooks
// (trace/tracer_time.h): the trace's own measure of them is taken off the
// host's time before the calls, whatever machine the what-if is priced on.
// Where links split its per-launch cost, the tracer's callbacks in the calls
// come from the trace's own measure too (dearer in a real program than in
// links' warm loop), and only CUPTI's part from the system file.
#pragma once

#include <cstdint>
#include <vector>

#include "analyzer/trace/tracer_time.h"

#include "analyzer/model/graph_launch.h"
#include "analyzer/whatif/replay_input.h"
#include "analyzer/whatif/replay_timeline.h"

namespace apptracer::whatif {

// What the recording machine's system file says tracing added to its calls.
struct TracingAdded {
  // To each kernel launch call: all links measured, or CUPTI's part of it
  // where links split off the tracer's callbacks and the trace measured its
  // own (`in_calls`).
  int64_t per_launch_ns = 0;
  const model::GraphLaunch* graph_launch = nullptr;  // a graph launch's untraced cost; null: not measured
  std::vector<int64_t> before_calls;                   // per call: the tracer's hooks in the time before it
  std::vector<int64_t> in_calls;                       // per call: the tracer's callbacks in it
  bool any() const { return per_launch_ns > 0 || graph_launch || !before_calls.empty() || !in_calls.empty(); }
};

// Per call, the tracer's time between calls (its hooks) in the host's time
// before it: each stretch's time shared evenly among the calls that start in
// it after their thread's previous call (not those whose thread waited to
// be woken: it was idle, not running the program). Empty where the trace
// has no tracer time.
std::vector<int64_t> tracer_time_before_calls(const ReplayInput& input,
                                              const std::vector<trace::TracerTime::Stretch>& stretches);
// Per call, the tracer's CUDA callbacks in it: each stretch's shared evenly
// among every call that starts in it. Empty where the trace has no tracer time.
std::vector<int64_t> tracer_time_in_calls(const ReplayInput& input,
                                          const std::vector<trace::TracerTime::Stretch>& stretches);

// How many calls remove_tracing_cost shortened, of each kind.
struct UntracedCalls {
  int64_t kernel_launches = 0;
  int64_t graph_launches = 0;
  int64_t before_calls_ns = 0;  // the tracer's hooks' time taken off, all calls together
  int64_t in_calls_ns = 0;      // the tracer's callbacks' time taken off, all calls together
  bool any() const { return kernel_launches > 0 || graph_launches > 0 || before_calls_ns > 0 || in_calls_ns > 0; }
};

// Takes each call's `before_calls` off the host's time before it, never
// below 0, and its `in_calls` off the call (what is left of it then from the
// time before); then `per_launch_ns` off each call that launched a kernel,
// from what is left of the time before it first, then from the call itself;
// cuts each graph launch call that took longer than the measured untraced
// launch of its nodes to that. Work a call issued is issued by its (earlier)
// end at the latest.
UntracedCalls remove_tracing_cost(const ReplayInput& input, const TracingAdded& cost, NodeTiming& t);

}  // namespace apptracer::whatif
