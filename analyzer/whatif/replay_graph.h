// The dependencies a replay keeps from the recording: which node must end
// before another may start, and why.
//
// Nodes are the host calls (0 .. calls-1) and the stream operations (calls
// .. calls+ops-1, in ReplayInput order). Kept, as the recording had them:
//  * stream order: an operation starts after the one before it on its stream
//    ("lane"); copies moved to their own lane by --overlap are ordered among
//    themselves per device and direction instead;
//  * the legacy default stream's implicit ordering (stream_kinds): an
//    operation on it after what was issued before it on the device's
//    blocking streams, and an operation on a blocking stream after what was
//    issued before it on the legacy stream;
//  * event waits: a wait marker ends after the record marker it waits for
//    (the latest record of that event issued before the wait);
//  * host order: a call starts after the thread's previous call (plus the
//    host time recorded between them);
//  * blocking: a synchronization ends after the work it waited for (issued
//    before it: what the host had put on the awaited streams; the legacy
//    stream's: the blocking streams' too), and a blocking copy's call after
//    the copy;
//  * data (--overlap only): a moved copy after the operations whose values it
//    reads or overwrites, and they after it (overlap.h).
// Every dependency points to a node issued (or started) no later in the
// recording, except a blocking call's wait for the copy it issued itself:
// `order` is a topological order, recorded time first.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "analyzer/whatif/replay_input.h"

namespace apptracer::whatif {

enum class DepReason : uint8_t {
  None,    // nothing before it: the thread's first call, an op without a call
  Host,    // the thread's previous call (start) / the call's own work (end)
  Issue,   // an op: the call that issued it
  Stream,  // the previous operation on its lane
  Event,   // the event record a wait marker waits for
  Data,    // a value it reads or overwrites (DVDG, --overlap)
  Wait,    // a call: the work it blocked for
  Link,    // a copy: the previous copy on the same link
  Thread,  // a call: the other thread's call that woke its thread (HostCall::woken_by)
};
const char* to_string(DepReason reason);

struct Dependency {
  uint32_t node;
  DepReason reason;
};

struct GraphOptions {
  // Per op: the host blocks in its call until the copy completes.
  std::vector<bool> blocking;
  // Per op: moved off its stream to its device's copy lane for its direction.
  std::vector<bool> moved;
  // Per op: predecessor ops (indexes into ReplayInput::ops) from the DVDG.
  std::vector<std::vector<uint32_t>> data;
  // Per ReplayInput::syncs: waits for nothing (whatif --no-syncs, host_waits.h).
  std::vector<bool> dropped_syncs;
};

struct ReplayGraph {
  uint32_t calls = 0;
  uint32_t ops = 0;
  // deps_begin[n] .. deps_begin[n + 1] index `deps`: what node n's time waits
  // for (ops: lane, event and data predecessors; calls: the work they block for).
  std::vector<uint32_t> deps_begin;
  std::vector<Dependency> deps;
  std::vector<uint32_t> order;  // every node, dependencies first
  std::vector<int32_t> lane;    // per op: its lane (moved copies: a copy lane)
  std::vector<bool> moved;      // per op: moved to a copy lane

  uint32_t op_node(uint32_t op) const { return calls + op; }
  bool is_call(uint32_t node) const { return node < calls; }
};

// Throws DamagedTrace when the dependencies are circular.
ReplayGraph build_replay_graph(const ReplayInput& input, const GraphOptions& options);

}  // namespace apptracer::whatif
