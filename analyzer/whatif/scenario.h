// A what-if: the system a trace is replayed on and the changes made to the
// program, turned into each node's timing (timeline.h).
//
// Copies (and prefetches) take the time the system's model gives their path
// (model/system_model.h): the path is the copy's direction, host memory
// kind and NUMA node, and GPUs, as the trace recorded them, with the changes
// applied. A copy staged through pageable memory keeps what the recording
// shows of it (its staging in the call before or after the DMA, and the
// DMA), each part times what its path in the scenario costs over what its
// recorded path costs on the recording's machine: with nothing changed, the
// recording; pinned, it takes its pinned path's time, not staged. A copy no path models (host to host, managed memory copied with
// cudaMemcpy, an unknown endpoint) keeps its recorded time. While a copy
// the other way over the same GPU's host link runs, a copy keeps its path's
// duplex share of its speed (timeline.h; prefetches, whose paths have none,
// keep all of it). Kernels keep their recorded durations (times
// --kernel-scale), less or plus what their loads and stores over a peer or
// host path gain or lose where the scenario prices it differently
// (kernel_traffic.h); memsets theirs.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analyzer/whatif/peer_relays.h"
#include "analyzer/whatif/recorded.h"
#include "analyzer/whatif/replay_graph.h"
#include "analyzer/whatif/replay_input.h"
#include "analyzer/model/system_model.h"
#include "analyzer/whatif/replay_timeline.h"

namespace apptracer::whatif {

class KernelTraffic;

struct Scenario {
  const model::SystemModel* system = nullptr;  // nullptr: copies keep their recorded times
  // The system file of the machine the trace was recorded on: a staged
  // copy's recorded path is priced on it to scale the copy's recorded time
  // (above). nullptr: the file describes another machine, and a staged
  // copy takes its path's model time, split as the recording split it.
  const model::SystemModel* recorded_on = nullptr;
  bool pin = false;                    // pageable host buffers become pinned
  std::optional<int> numa_node;        // every host buffer on this node
  bool overlap = false;                // copies to their own lanes (overlap.h)
  double kernel_scale = 1.0;
  // Managed memory kernels faulted in on demand is prefetched to their GPU
  // on their stream just before them: the kernel loses the stall `links`
  // measured for faulting those bytes in (fault.HtoD: a faulting kernel less
  // the same kernel on resident pages) and gains the prefetch's time
  // (prefetch.HtoD), which runs before it in stream order.
  bool prefetch_managed = false;
  // --peer-copies: relays through host memory between GPUs sent peer to
  // peer (peer_relays.h); nullptr: none.
  const PeerRelayPlan* peer_relays = nullptr;
  // Kernels' loads and stores over peer and host paths, repriced (kernel_traffic.h).
  const KernelTraffic* kernel_traffic = nullptr;
};

// What --prefetch-managed changed.
struct PrefetchUse {
  int64_t kernels = 0;  // kernels whose migrations became prefetches
  int64_t bytes = 0;
  int64_t unpriced = 0;  // kernels kept as recorded: the system has no fault.HtoD or prefetch.HtoD path
};

// How one copy was priced in a scenario.
struct TransferUse {
  std::string wanted;  // its path in this scenario ("" when no kind of path models it)
  std::string used;    // the measured path that priced it ("" none: recorded time kept)
  bool duplex_measured = false;  // `used` has a duplex share (else 1: not slowed by the other direction)
  // A staged copy's recorded time, scaled: it holds the contention with the
  // other direction it met, and is not slowed again.
  bool from_recording = false;
};

struct ScenarioTiming {
  NodeTiming timing;
  std::vector<TransferUse> transfers;  // per op; empty for ops that are not copies
  PrefetchUse prefetch;
};

// Per op: the host waits in the copy's call until the copy is done. A
// synchronous copy does, and so does any copy from or to pageable memory
// (the driver stages it while the caller waits); --pin makes the latter
// asynchronous.
std::vector<bool> blocking_copies(const ReplayInput& input, bool pin);

// The path a copy takes in the scenario, or nullopt when no path models it.
std::optional<model::LinkPath> wanted_path(const ReplayOp& op, const Scenario& scenario);

// `recorded_graph` is the graph of the recording, `graph` the scenario's
// (their calls may block for different things).
ScenarioTiming scenario_timing(const ReplayInput& input, const RecordedTiming& recorded,
                               const ReplayGraph& recorded_graph, const ReplayGraph& graph,
                               const Scenario& scenario);

}  // namespace apptracer::whatif
