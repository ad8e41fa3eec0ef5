// Replaying a graph: when each node starts and ends, and what held it.
//
//   call:  start = previous call's end + the host time recorded between them
//          (the thread's first call: its recorded start)
//          end   = start + duration                      (it blocked for nothing)
//                  max(start + own, awaited end + tail)  (it blocked)
//   op:    issued at its call's start + the offset recorded inside the call
//          start = max(issue + launch, latest dependency's end + gap),
//                  then the first time its link is free for its whole duration
//          end   = start + duration
//
// launch and gap are the op's own recorded latencies (recorded.h), so a
// replay with every recorded duration reproduces the recording exactly; a
// faster or slower predecessor moves the op by as much as it really waited
// for it.
#pragma once

#include <cstdint>
#include <vector>

#include "replay_graph.h"
#include "replay_input.h"

namespace apptracer::whatif {

struct NodeTiming {
  // Per op.
  std::vector<int64_t> duration;
  std::vector<int64_t> launch;        // issue -> start when nothing else held it
  std::vector<int64_t> gap;           // dependency's end -> start
  std::vector<int64_t> issue_offset;  // its call's start -> its issue
  std::vector<int32_t> link;          // the link it occupies, -1: none (kept at its recorded time)
  // Per call.
  std::vector<int64_t> call_duration;  // when it blocks for nothing
  std::vector<int64_t> call_own;       // when it blocks: its own time
  std::vector<int64_t> call_tail;      // when it blocks: awaited end -> return
  std::vector<int64_t> call_gap;       // previous call's end -> its start
  std::vector<int64_t> call_first_start;  // the thread's first call: its start
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
};

Timeline simulate(const ReplayInput& input, const ReplayGraph& graph, const NodeTiming& timing);

}  // namespace apptracer::whatif
