// Replaying a graph: when each node starts and ends, and what held it.
//
//   call:  start = previous call's end + the host time recorded between them
//          (the thread's first call: its recorded start); a call another
//          thread's call woke (HostCall::woken_by): the later of the
//          previous call's end and the waking call's end + the delay
//          recorded between them
//          end   = start + duration                      (it blocked for nothing)
//                  max(start + own, awaited end + tail)  (it blocked)
//   op:    issued at its call's start + the offset recorded inside the call
//          start = max(issue + launch, each dependency's end + its gap),
//                  then the first time its link is free for its whole duration
//          (the gap after the op before it on its lane: lane_gap; after
//          any other dependency: gap)
//          end   = start + duration
//
// launch and gap are the op's own recorded latencies (recorded.h), so a
// replay with every recorded duration reproduces the recording exactly; a
// faster or slower predecessor moves the op by as much as it really waited
// for it.
//
// Duplex contention: the two directions of a GPU's host link (HtoD, DtoH)
// are separate links, each taking turns among its own copies, but while
// both are busy a copy moves at `duplex` of its own speed (its path's
// measured share, model::Duplex). A copy that takes `duration` alone and
// starts at s ends at the e where
//
//   duration = (e - s) - (1 - duplex) * |[s, e) while the other direction is busy|
//
// (full speed while the other direction is idle, duplex while it is busy).
// Its slowing moves the other direction's copies too, so this is solved by
// replaying again: each replay recomputes every such copy's duration from
// where the other direction was busy in the previous one, until no
// duration changes by more than 1 ns (the fluid model's fixed point; each
// replay leaves about 1 - duplex of the previous one's error) or kMostReplays.
#pragma once

#include <cstdint>
#include <vector>

#include "analyzer/whatif/replay_graph.h"
#include "analyzer/whatif/replay_input.h"

namespace apptracer::whatif {

struct NodeTiming {
  // Per op.
  std::vector<int64_t> duration;
  std::vector<int64_t> launch;        // issue -> start when nothing else held it
  std::vector<int64_t> gap;           // dependency's end -> start
  std::vector<int64_t> lane_gap;      // the same after the op before it on its lane
  std::vector<int64_t> issue_offset;  // its call's start -> its issue
  std::vector<int32_t> link;          // the link it occupies, -1: none (kept at its recorded time)
  std::vector<double> duplex;         // the share of its speed it keeps while opposite_link is busy
  // Per link: the other direction of the same GPU's host link, -1: none.
  std::vector<int32_t> opposite_link;
  // Per call.
  std::vector<int64_t> call_duration;  // when it blocks for nothing
  std::vector<int64_t> call_own;       // when it blocks: its own time
  std::vector<int64_t> call_tail;      // when it blocks: awaited end -> return
  std::vector<int64_t> call_gap;       // previous call's end -> its start
  std::vector<int64_t> call_first_start;  // the thread's first call: its start
  std::vector<int64_t> call_wake;      // woken_by's end -> its start
};

struct Timeline {
  std::vector<int64_t> start;  // per node
  std::vector<int64_t> end;
  std::vector<int64_t> issue;  // per op: when its call issued it
  // What decided each node's start (ops) or end (calls); calls also keep
  // what decided their start (the previous call, or nothing).
  std::vector<Dependency> bound_by;
  std::vector<Dependency> call_start_bound_by;
  int64_t first_ns = 0;  // the recording's first instant: the common origin
  int64_t last_ns = 0;   // the latest end
  uint32_t last_node = 0;
  // Per op: it ran while the other direction of its GPU's host link was busy.
  std::vector<bool> opposed;
  int replays = 1;       // duplex contention: the replays it took (see above)
  bool settled = true;   // false: still changing after kMostReplays; the last is kept
};

constexpr int kMostReplays = 50;

Timeline simulate(const ReplayInput& input, const ReplayGraph& graph, const NodeTiming& timing);

}  // namespace apptracer::whatif
