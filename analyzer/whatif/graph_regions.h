// --graphs: the steady steps replayed as CUDA graph launches, as capturing
// each step with torch.cuda.graph (or cudaStreamBeginCapture) and replaying
// it would run it.
//
// A region is a run of a step's calls, in time order over every thread, that
// a stream capture could hold: it ends at a call no capture can hold (a
// synchronization, a copy from or to pageable memory or a synchronous one,
// a synchronous memset, an allocation or free other than the stream-ordered
// ones), which stays in the replay as recorded, and at the step's end. In
// the replay a region is one graph launch:
//  * its first call becomes the graph's launch, taking what the system
//    file's graph_launch says cuGraphLaunch costs the host for its nodes;
//  * its other calls, and the host's time between them (a framework's
//    Python and dispatcher work between launches), are gone: they take no
//    time and follow the launch at once (woken by it, HostCall::woken_by);
//  * its GPU work is issued as the launch returns and keeps its recorded
//    durations, streams and event order: each node starts the trace's
//    typical launch latency after the launch, or graph_launch's node cost
//    after the work it follows, whichever is later. Work a graph launch ran
//    already (launch_kind graph) keeps its recorded timing.
// Without steps, the whole run is cut into regions the same way.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "analyzer/model/graph_launch.h"
#include "analyzer/model/system_model.h"
#include "analyzer/trace/steps.h"
#include "analyzer/whatif/recorded.h"
#include "analyzer/whatif/replay_graph.h"
#include "analyzer/whatif/replay_input.h"
#include "analyzer/whatif/replay_timeline.h"

namespace apptracer::whatif {

// What a graph costs in the replay: measured (the system file's
// graph_launch) or assumed.
struct GraphCost {
  model::GraphLaunch launch;
  bool measured = false;
  std::string source;  // "measured by apptracer links (FILE, GPU 0)" or why it is assumed
};

GraphCost graph_cost(const model::SystemModel& system, const std::string& file);

struct GraphRegion {
  int64_t step = 0;     // the step's number; 0 without steps
  uint32_t launch = 0;  // the call that launches its graph: the region's first
  int64_t calls = 0;    // the calls it holds, the launch's included
  int64_t nodes = 0;    // the kernels, memsets and copies it runs
};

struct GraphPlan {
  std::vector<int32_t> region_of;  // per call: its region, -1 none
  std::vector<GraphRegion> regions;
  int64_t steps = 0;  // steps replayed as graphs
  std::string scope;  // "30 steady steps (NVTX ranges "step")", "the whole run (the trace has no steps)"
  // What ended regions inside a step, e.g. "cudaStreamSynchronize (a
  // synchronization)" -> how many times.
  std::map<std::string, int64_t> bounds;
};

// `steps`: the process's steps, nullptr or none steady for the whole run.
// `options`: the what-if's copies that block their calls (with --pin,
// pageable ones no longer do and can be captured) and its synchronizations
// that wait for nothing (--no-syncs): neither ends a region.
GraphPlan plan_graphs(const ReplayInput& input, const trace::ProcessSteps* steps, const GraphOptions& options);

// The input the replay runs: each captured call but its region's launch is
// woken by the launch.
void wake_captured_calls(const GraphPlan& plan, ReplayInput& input);

// The timing of the graph launches (above), over a scenario's timing.
void time_graph_launches(const GraphPlan& plan, const GraphCost& cost, const ReplayInput& input,
                         const Typicals& typical, NodeTiming& t);

// What was replayed as graphs, what bounded the regions, and where the cost came from.
void add_graph_notes(const GraphPlan& plan, const GraphCost& cost, std::vector<std::string>& notes);

}  // namespace apptracer::whatif
