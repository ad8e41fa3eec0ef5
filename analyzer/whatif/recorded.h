// What the recording itself says about each node's timing, taken once from
// the recorded dependencies (stream order, events, syncs; never --overlap's):
//
//  * an op whose dependencies were done before it was issued was held by
//    its issue: `launch` = its recorded start - issue, and it follows a
//    later dependency after the typical gap; one that waited for a
//    dependency keeps `gap` = its start - that dependency's end, and is
//    issued with at most the typical launch latency;
//  * a call that blocked keeps `own` (its time not spent waiting) and `tail`
//    (from the awaited work's end to its return; negative when it returned
//    before the awaited work ended, as a pageable HtoD copy does once its
//    last chunk is staged);
//  * the host time between a thread's calls;
//  * a synchronization's own cost is the trace's typical one, never its
//    recorded duration: a synchronization that waited for work the replay
//    sees ends its recorded tail after that work, and one that waited for
//    nothing the replay sees takes what the trace's synchronizations that
//    waited for nothing took (their median), as its time went to waiting
//    for the GPU, not to host work.
//
// Typical values stand in where a change makes an op's own value meaningless
// (a pageable copy pinned no longer stages through the host): medians over
// the trace, or a fixed fallback where the trace has none (Typicals).
#pragma once

#include <cstdint>
#include <vector>

#include "analyzer/whatif/replay_graph.h"
#include "analyzer/whatif/replay_input.h"
#include "analyzer/whatif/replay_timeline.h"

namespace apptracer::whatif {

struct Typicals {
  // Staged (pageable) copies are left out: they start after their staging.
  int64_t launch_ns = 0;         // issue -> start of ops nothing held
  int64_t gap_ns = 0;            // dependency's end -> start of ops a dependency held
  int64_t copy_launch_ns = 0;    // the same as launch_ns for copies
  int64_t async_call_ns = 0;     // an asynchronous copy's call
  int64_t sync_tail_ns = 0;      // awaited end -> return of a blocking call
  int64_t sync_call_ns = 0;      // a synchronization that waited for nothing: its call
  int64_t idle_syncs = 0;        // how many such the trace has (0: sync_call_ns is a fallback)
};

struct RecordedTiming {
  NodeTiming timing;  // recorded durations: a replay with it reproduces the recording
  // Per op: a dependency still ran when it was issued, so what came before
  // its start is `gap` (else `launch`).
  std::vector<bool> held;
  std::vector<int64_t> start;  // per node: recorded start and end (markers: when
  std::vector<int64_t> end;    // their stream reached them)
  Typicals typical;
};

RecordedTiming recorded_timing(const ReplayInput& input, const ReplayGraph& graph);

// Whether a copy's host endpoint is pageable memory (the driver stages it).
bool from_pageable(const ReplayOp& op);

}  // namespace apptracer::whatif
