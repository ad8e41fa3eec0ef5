#include "analyzer/whatif/scenario.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "apptracer/saturating.h"
#include "analyzer/model/copy_path.h"
#include "analyzer/whatif/kernel_traffic.h"

namespace apptracer::whatif {

namespace {

using model::HostMemory;
using model::LinkKind;
using model::LinkPath;

// The link a transfer occupies: one direction of a GPU's host connection
// (prefetches share it with copies), a GPU's own copies, a GPU pair.
std::string link_name(const LinkPath& path) {
  std::string gpu = ".gpu" + std::to_string(path.device);
  switch (path.kind) {
    case LinkKind::HtoD:
    case LinkKind::PrefetchHtoD:
    case LinkKind::FaultHtoD: return "HtoD" + gpu;
    case LinkKind::DtoH:
    case LinkKind::PrefetchDtoH: return "DtoH" + gpu;
    case LinkKind::DtoD: return "DtoD" + gpu;
    case LinkKind::PeerDirect:
    case LinkKind::PeerStaged: return "PtoP" + gpu + ".gpu" + std::to_string(path.peer);
  }
  return "?";
}

// A kernel whose on-demand migrations were prefetched before it (Scenario).
double prefetched_kernel_ns(const ReplayOp& op, double own, const model::SystemModel& system, PrefetchUse& use) {
  int device = static_cast<int>(*op.device);
  std::optional<double> fault = system.transfer_ns({LinkKind::FaultHtoD, HostMemory::None, -1, device, -1},
                                                   op.faulted_in_bytes);
  std::optional<double> prefetch = system.transfer_ns(
      {LinkKind::PrefetchHtoD, HostMemory::None, -1, device, -1}, op.faulted_in_bytes);
  if (!fault || !prefetch) {
    ++use.unpriced;
    return own;
  }
  ++use.kernels;
  use.bytes = saturating_add(use.bytes, op.faulted_in_bytes);
  return std::max(0.0, own - *fault) + *prefetch;
}

// The measured path that prices `wanted` on `system`, with the stand-ins
// for what it did not measure: a peer copy without peer access is staged
// through the host; a system file from before `links` measured untouched
// destinations prices them as pageable. `wanted` becomes the path looked up.
model::ResolvedPath resolve_path(const model::SystemModel& system, LinkPath& wanted) {
  model::ResolvedPath resolved = system.resolve(wanted);
  if (!resolved.path && wanted.kind == LinkKind::PeerDirect) {
    wanted.kind = LinkKind::PeerStaged;
    resolved = system.resolve(wanted);
  }
  if (!resolved.path && wanted.host == HostMemory::Fresh) {
    wanted.host = HostMemory::Pageable;
    resolved = system.resolve(wanted);
  }
  return resolved;
}

// Whether the copy's call waited for the copy alone (a staging call): its
// own time and tail are the copy's staging.
bool staging_call_waits_for(uint32_t i, const ReplayOp& op, const ReplayGraph& recorded_graph) {
  if (op.call < 0) return false;
  auto c = static_cast<uint32_t>(op.call);
  uint32_t begin = recorded_graph.deps_begin[c], end = recorded_graph.deps_begin[c + 1];
  return end == begin + 1 && recorded_graph.deps[begin].node == recorded_graph.op_node(i);
}

// A copy staged through the driver's pinned buffer (from or into pageable
// memory) shows in the trace in three parts: the staging before the DMA (in
// the call, before the activity's start: its launch, or its gap where the
// stream still held it), the DMA (the activity) and the copy out of the
// staging buffer after it (in the call, after the activity's end). Its path's
// model is the whole copy as `links` times it, which misses what staging
// costs a program (its first touch of pages, a busy CPU, the copy's place in
// a pipeline): a 2 KiB copy of a PyTorch step staged for 13 us where `links`
// priced it at 1 us. So each part keeps its recorded time, times `scale`:
// what the scenario's path costs over what the recording's path costs on
// the recording's machine (1 with nothing changed: the recording).
void scale_staged(uint32_t i, const ReplayOp& op, double scale, const RecordedTiming& recorded,
                  const ReplayGraph& recorded_graph, const ReplayGraph& graph, NodeTiming& t) {
  const NodeTiming& was = recorded.timing;
  auto scaled = [scale](int64_t ns) { return saturating_round(static_cast<double>(ns) * scale); };
  if (recorded.held[i]) {
    t.gap[i] = scaled(was.gap[i]);
    if (!graph.moved[i]) t.lane_gap[i] = scaled(was.lane_gap[i]);
  } else {
    t.launch[i] = scaled(was.launch[i]);
  }
  t.duration[i] = scaled(was.duration[i]);
  if (staging_call_waits_for(i, op, recorded_graph)) {
    t.call_own[op.call] = scaled(was.call_own[op.call]);
    t.call_tail[op.call] = scaled(was.call_tail[op.call]);
  }
}

// The staged copy's recorded time, from its staging to the return of the
// call that waited for it: what scale_staged scales.
double staged_recorded_ns(uint32_t i, const ReplayOp& op, const RecordedTiming& recorded,
                          const ReplayGraph& recorded_graph) {
  const NodeTiming& was = recorded.timing;
  int64_t before = recorded.held[i] ? was.gap[i] : was.launch[i];
  int64_t after = staging_call_waits_for(i, op, recorded_graph) ? std::max<int64_t>(0, was.call_tail[op.call]) : 0;
  return static_cast<double>(saturating_add(saturating_add(before, was.duration[i]), after));
}

// What the copy's recorded path costs on the recording's machine, or
// nullopt where that system has no such path.
std::optional<double> recorded_path_ns(const ReplayOp& op, const model::SystemModel& recorded_on) {
  std::optional<LinkPath> path = wanted_path(op, Scenario{});
  if (!path) return std::nullopt;
  model::ResolvedPath resolved = resolve_path(recorded_on, *path);
  if (!resolved.path) return std::nullopt;
  double ns = resolved.path->model.transfer_ns(op.bytes);
  return ns > 0 ? std::optional<double>(ns) : std::nullopt;
}

}  // namespace

std::vector<bool> blocking_copies(const ReplayInput& input, bool pin) {
  std::vector<bool> blocking(input.ops.size(), false);
  for (size_t i = 0; i < input.ops.size(); ++i) {
    const ReplayOp& op = input.ops[i];
    if (op.kind != OpKind::Copy || op.call < 0) continue;
    blocking[i] = !op.is_async || (!pin && from_pageable(op));
  }
  return blocking;
}

std::optional<LinkPath> wanted_path(const ReplayOp& op, const Scenario& scenario) {
  if (op.kind == OpKind::Prefetch) {
    if (op.bytes <= 0) return std::nullopt;
    if (op.dst_device) return LinkPath{LinkKind::PrefetchHtoD, HostMemory::None, -1, static_cast<int>(*op.dst_device), -1};
    if (op.src_device) return LinkPath{LinkKind::PrefetchDtoH, HostMemory::None, -1, static_cast<int>(*op.src_device), -1};
    return std::nullopt;
  }
  if (op.kind != OpKind::Copy) return std::nullopt;
  model::CopyEndpoints copy{op.copy_kind, op.src_memory, op.dst_memory,       op.src_device,
                            op.dst_device, op.src_numa,   op.dst_numa,         op.dst_sampled_pages,
                            op.dst_untouched_pages};
  return model::path_of_copy(copy, {scenario.pin, scenario.numa_node});
}

ScenarioTiming scenario_timing(const ReplayInput& input, const RecordedTiming& recorded,
                               const ReplayGraph& recorded_graph, const ReplayGraph& graph,
                               const Scenario& scenario) {
  ScenarioTiming out;
  NodeTiming& t = out.timing;
  t = recorded.timing;
  out.transfers.resize(input.ops.size());
  std::map<std::string, int32_t> links;
  for (size_t i = 0; i < input.ops.size(); ++i) {
    const ReplayOp& op = input.ops[i];
    // A copy moved to a copy lane queues on the copy engine behind the
    // copies before it, issued from other streams: it starts as the engine
    // frees (the path's latency is in its duration), not after the turnaround
    // its stream took between two of its own operations.
    if (graph.moved[i]) t.lane_gap[i] = 0;
    if (op.kind == OpKind::Kernel) {
      double own = static_cast<double>(t.duration[i]) * scenario.kernel_scale;
      if (scenario.prefetch_managed && op.faulted_in_bytes > 0 && op.device) {
        own = prefetched_kernel_ns(op, own, *scenario.system, out.prefetch);
      }
      if (scenario.kernel_traffic) own = scenario.kernel_traffic->kernel_ns(op.source_id, own);
      t.duration[i] = saturating_round(own);
      continue;
    }
    const PeerRelayPlan* relays = scenario.peer_relays;
    if (relays && relays->relayed_by[i] >= 0) {
      // Its bytes came with the peer copy it waits for: nothing left to move.
      t.duration[i] = t.launch[i] = t.gap[i] = t.lane_gap[i] = 0;
      out.transfers[i] = {kSentPeerToPeer, kSentPeerToPeer, false};
      continue;
    }
    bool to_peer = relays && relays->peer_path[i];
    std::optional<LinkPath> wanted = to_peer ? relays->peer_path[i] : wanted_path(op, scenario);
    if (op.kind == OpKind::Copy && (scenario.pin || to_peer) && from_pageable(op)) {
      // No longer staged by the host: issued like the trace's other copies,
      // and started as they are once its stream frees, not after the
      // staging that held it there.
      t.launch[i] = recorded.typical.copy_launch_ns;
      t.gap[i] = std::min(t.gap[i], recorded.typical.gap_ns);
      t.lane_gap[i] = std::min(t.lane_gap[i], t.gap[i]);
      if (op.call >= 0) {
        // Its call no longer stages it: it issues the copy and waits.
        t.call_own[op.call] = std::min(t.call_own[op.call], recorded.typical.async_call_ns);
        t.call_tail[op.call] = recorded.typical.sync_tail_ns;
      }
    }
    if (!wanted) continue;
    TransferUse& use = out.transfers[i];
    use.wanted = wanted->name();
    if (!scenario.system) continue;
    model::ResolvedPath resolved = resolve_path(*scenario.system, *wanted);
    if (!resolved.path) continue;
    use.used = resolved.path->path.name();
    use.duplex_measured = resolved.path->duplex.has_value();
    double priced = resolved.path->model.transfer_ns(op.bytes);
    auto index = static_cast<uint32_t>(i);
    bool staged = from_pageable(op) && (wanted->host == HostMemory::Pageable || wanted->host == HostMemory::Fresh);
    std::optional<double> reference;
    if (from_pageable(op) && scenario.recorded_on) reference = recorded_path_ns(op, *scenario.recorded_on);
    double whole = from_pageable(op) ? staged_recorded_ns(index, op, recorded, recorded_graph) : 0;
    if (staged && (reference || whole > 0)) {
      // Without a model of the recording's machine to compare with, the
      // model's time is split between the parts as the recording split it.
      scale_staged(index, op, priced / (reference ? *reference : whole), recorded, recorded_graph, graph, t);
      use.from_recording = true;
    } else if (reference && scenario.pin && !to_peer) {
      t.duration[i] = saturating_round(model::pinned_copy_ns(priced, *reference, whole));
    } else {
      t.duration[i] = saturating_round(priced);
    }
    // A time taken from the recording already holds the contention it met.
    t.duplex[i] = use.duplex_measured && !use.from_recording ? resolved.path->duplex->factor : 1.0;
    t.link[i] = links.emplace(link_name(*wanted), static_cast<int32_t>(links.size())).first->second;
  }
  // A GPU's HtoD and DtoH links are the two directions of its host link.
  t.opposite_link.assign(links.size(), -1);
  for (const auto& [name, link] : links) {
    std::string direction = name.substr(0, name.find('.'));
    if (direction != "HtoD" && direction != "DtoH") continue;
    auto opposite = links.find((direction == "HtoD" ? "DtoH" : "HtoD") + name.substr(direction.size()));
    if (opposite != links.end()) t.opposite_link[link] = opposite->second;
  }
  // A call that blocked in the recording but no longer does (its pageable
  // copy is pinned now) returns as the trace's asynchronous copies do.
  for (uint32_t c = 0; c < input.calls.size(); ++c) {
    bool blocked = recorded_graph.deps_begin[c] != recorded_graph.deps_begin[c + 1];
    bool blocks = graph.deps_begin[c] != graph.deps_begin[c + 1];
    if (blocked && !blocks) t.call_duration[c] = std::min(t.call_duration[c], recorded.typical.async_call_ns);
  }
  return out;
}

}  // namespace apptracer::whatif
