#include "analyzer/whatif/recorded.h"

#include <algorithm>
#include <climits>

#include "analyzer/model/median.h"
#include "apptracer/saturating.h"

namespace apptracer::whatif {

namespace {

// Where a trace has no instance to take a median of. Typical of the H100
// here (bench/RESULTS.md): an asynchronous copy's call takes a few µs, a
// synchronization returns a few µs after the GPU is done.
constexpr int64_t kFallbackAsyncCallNs = 5000;
constexpr int64_t kFallbackSyncTailNs = 3000;

bool is_marker(const ReplayOp& op) {
  return op.kind == OpKind::EventRecord || op.kind == OpKind::EventWait;
}

// The latest recorded end of what `node` waits for (INT64_MIN: nothing).
int64_t latest_dependency_end(const ReplayGraph& graph, const std::vector<int64_t>& end, uint32_t node) {
  int64_t latest = INT64_MIN;
  for (uint32_t d = graph.deps_begin[node]; d < graph.deps_begin[node + 1]; ++d) {
    latest = std::max(latest, end[graph.deps[d].node]);
  }
  return latest;
}

// A synchronization that waited for nothing the replay sees (none of the
// work it awaits was still running as it began) spent its time on the call
// itself, or waiting for work the trace does not show: it takes the
// median of such calls, never its own duration, which would replay as host
// work; should its work end later in a what-if, it returns the typical tail
// after it, but never later after the work than the recording shows it
// returned (so the recording replays as recorded). One that waited keeps
// its recorded tail after the work.
void own_sync_costs(const ReplayInput& input, const ReplayGraph& graph, RecordedTiming& r) {
  std::vector<bool> is_sync(input.calls.size(), false);
  for (const SyncCall& sync : input.syncs) is_sync[sync.call] = true;
  std::vector<uint32_t> idle;
  std::vector<int64_t> durations;
  for (uint32_t c = 0; c < input.calls.size(); ++c) {
    if (!is_sync[c]) continue;
    const HostCall& call = input.calls[c];
    bool blocks = graph.deps_begin[c] != graph.deps_begin[c + 1];
    if (blocks && latest_dependency_end(graph, r.end, c) > call.start_ns) continue;
    idle.push_back(c);
    durations.push_back(elapsed_ns(call.start_ns, call.end_ns));
  }
  Typicals& typical = r.typical;
  typical.idle_syncs = static_cast<int64_t>(durations.size());
  typical.sync_call_ns = model::middle_value(std::move(durations), typical.sync_tail_ns);
  NodeTiming& t = r.timing;
  for (uint32_t c : idle) {
    t.call_duration[c] = t.call_own[c] = typical.sync_call_ns;
    if (graph.deps_begin[c] == graph.deps_begin[c + 1]) continue;
    int64_t awaited = latest_dependency_end(graph, r.end, c);
    t.call_tail[c] = std::min(typical.sync_tail_ns, elapsed_ns(awaited, input.calls[c].end_ns));
  }
}

}  // namespace

bool from_pageable(const ReplayOp& op) {
  return op.kind == OpKind::Copy &&
         (op.src_memory == MemoryKind::Pageable || op.dst_memory == MemoryKind::Pageable);
}

RecordedTiming recorded_timing(const ReplayInput& input, const ReplayGraph& graph) {
  size_t calls = input.calls.size(), ops = input.ops.size();
  RecordedTiming r;
  r.start.resize(calls + ops);
  r.end.resize(calls + ops);
  for (size_t c = 0; c < calls; ++c) {
    r.start[c] = input.calls[c].start_ns;
    r.end[c] = input.calls[c].end_ns;
  }
  for (size_t i = 0; i < ops; ++i) {
    r.start[calls + i] = input.ops[i].start_ns;
    r.end[calls + i] = input.ops[i].end_ns;
  }
  auto latest_end = [&](uint32_t node) { return latest_dependency_end(graph, r.end, node); };

  // Markers end when their stream (or awaited record) gets there.
  std::vector<int64_t> ready(ops, INT64_MIN);
  for (uint32_t node : graph.order) {
    if (graph.is_call(node)) continue;
    uint32_t i = node - graph.calls;
    ready[i] = latest_end(node);
    if (is_marker(input.ops[i])) r.start[node] = r.end[node] = std::max(input.ops[i].issue_ns, ready[i]);
  }

  std::vector<int64_t> launches, gaps, copy_launches;
  for (size_t i = 0; i < ops; ++i) {
    const ReplayOp& op = input.ops[i];
    if (is_marker(op)) continue;
    int64_t start = r.start[calls + i];
    // A staged copy's start waited for its staging, not for a launch or a gap.
    if (from_pageable(op)) continue;
    if (ready[i] <= op.issue_ns) {
      launches.push_back(saturating_sub(start, op.issue_ns));
      if (op.kind == OpKind::Copy) copy_launches.push_back(launches.back());
    } else {
      gaps.push_back(elapsed_ns(ready[i], start));
    }
  }
  Typicals& typical = r.typical;
  typical.launch_ns = model::middle_value(launches, 0);
  typical.gap_ns = model::middle_value(gaps, 0);
  typical.copy_launch_ns = model::middle_value(copy_launches, typical.launch_ns);

  NodeTiming& t = r.timing;
  t.duration.resize(ops);
  t.launch.resize(ops);
  t.gap.resize(ops);
  t.issue_offset.resize(ops);
  t.link.assign(ops, -1);
  t.duplex.assign(ops, 1.0);
  r.held.assign(ops, false);
  std::vector<bool> issued_async_copy(calls, false), issued_work(calls, false);
  for (size_t i = 0; i < ops; ++i) {
    const ReplayOp& op = input.ops[i];
    uint32_t node = graph.op_node(static_cast<uint32_t>(i));
    int64_t start = r.start[node];
    t.duration[i] = elapsed_ns(start, r.end[node]);
    int64_t own_launch = elapsed_ns(op.issue_ns, start);
    if (is_marker(op)) {
      t.launch[i] = t.gap[i] = 0;
    } else if (ready[i] <= op.issue_ns) {
      t.launch[i] = own_launch;
      t.gap[i] = ready[i] == INT64_MIN ? typical.gap_ns
                                       : std::min(typical.gap_ns, saturating_sub(start, ready[i]));
    } else {
      t.gap[i] = elapsed_ns(ready[i], start);
      t.launch[i] = std::min(typical.launch_ns, own_launch);
      r.held[i] = true;
    }
    if (op.call >= 0) {
      const HostCall& call = input.calls[op.call];
      t.issue_offset[i] =
          std::min(elapsed_ns(call.start_ns, op.issue_ns), elapsed_ns(call.start_ns, call.end_ns));
      issued_work[op.call] = true;
      if (op.kind == OpKind::Copy && op.is_async && !from_pageable(op)) issued_async_copy[op.call] = true;
    }
  }

  // As recorded, the op before an op on its stream held it as any other
  // dependency did.
  t.lane_gap = t.gap;

  t.call_duration.resize(calls);
  t.call_own.resize(calls);
  t.call_tail.resize(calls);
  t.call_gap.resize(calls);
  t.call_first_start.resize(calls);
  t.call_wake.resize(calls);
  std::vector<int64_t> async_calls, work_calls, tails;
  for (uint32_t c = 0; c < calls; ++c) {
    const HostCall& call = input.calls[c];
    int64_t duration = elapsed_ns(call.start_ns, call.end_ns);
    t.call_duration[c] = duration;
    t.call_first_start[c] = call.start_ns;
    t.call_wake[c] = call.woken_by >= 0 ? elapsed_ns(input.calls[call.woken_by].end_ns, call.start_ns) : 0;
    t.call_gap[c] = call.previous >= 0 ? saturating_sub(call.start_ns, input.calls[call.previous].end_ns) : 0;
    bool blocks = graph.deps_begin[c] != graph.deps_begin[c + 1];
    if (!blocks) {
      t.call_own[c] = duration;
      t.call_tail[c] = 0;
      if (issued_async_copy[c]) async_calls.push_back(duration);
      if (issued_work[c]) work_calls.push_back(duration);
      continue;
    }
    int64_t awaited = latest_end(c);
    t.call_own[c] = duration - std::min(elapsed_ns(call.start_ns, awaited), duration);
    t.call_tail[c] = awaited >= call.start_ns ? saturating_sub(call.end_ns, awaited) : t.call_own[c];
    bool waits_for_pageable = false;
    for (uint32_t d = graph.deps_begin[c]; d < graph.deps_begin[c + 1]; ++d) {
      uint32_t node = graph.deps[d].node;
      if (!graph.is_call(node) && from_pageable(input.ops[node - graph.calls])) waits_for_pageable = true;
    }
    if (!waits_for_pageable && awaited >= call.start_ns && awaited <= call.end_ns) {
      tails.push_back(elapsed_ns(awaited, call.end_ns));
    }
  }
  typical.async_call_ns = model::middle_value(async_calls, model::middle_value(work_calls, kFallbackAsyncCallNs));
  typical.sync_tail_ns = model::middle_value(tails, kFallbackSyncTailNs);
  own_sync_costs(input, graph, r);
  return r;
}

}  // namespace apptracer::whatif
