#include "timeline.h"

#include <algorithm>
#include <climits>
#include <map>

namespace apptracer::whatif {

namespace {

// When a link (one direction of a GPU's host connection, a GPU's own copy
// engine, a peer connection) is busy. Copies over one link take turns at
// full speed, which finishes them together as sharing the bandwidth would;
// a copy takes the first gap long enough for it, so one issued later but
// ready earlier is not held behind one that is not ready yet.
class LinkCalendar {
 public:
  // Books `duration` at or after `ready`; returns the start and the copy
  // whose booking it had to wait for (-1: none).
  std::pair<int64_t, int64_t> book(int64_t ready, int64_t duration, uint32_t node) {
    int64_t start = ready;
    int64_t waited_for = -1;
    auto next = busy_.upper_bound(start);
    if (next != busy_.begin()) {
      auto previous = std::prev(next);
      if (previous->second.end > start) {
        start = previous->second.end;
        waited_for = previous->second.node;
      }
    }
    while (next != busy_.end() && next->first < start + duration) {
      if (next->second.end > start) {
        start = next->second.end;
        waited_for = next->second.node;
      }
      ++next;
    }
    busy_.emplace_hint(next, start, Booking{start + duration, node});
    return {start, waited_for};
  }

 private:
  struct Booking {
    int64_t end;
    uint32_t node;
  };
  std::multimap<int64_t, Booking> busy_;
};

}  // namespace

Timeline simulate(const ReplayInput& input, const ReplayGraph& graph, const NodeTiming& timing) {
  size_t nodes = input.calls.size() + input.ops.size();
  Timeline t;
  t.start.assign(nodes, 0);
  t.end.assign(nodes, 0);
  t.issue.assign(input.ops.size(), 0);
  t.bound_by.assign(nodes, {0, DepReason::None});
  t.call_start_bound_by.assign(input.calls.size(), {0, DepReason::None});
  t.first_ns = INT64_MAX;
  for (const HostCall& call : input.calls) t.first_ns = std::min(t.first_ns, call.start_ns);
  for (const ReplayOp& op : input.ops) t.first_ns = std::min(t.first_ns, op.issue_ns);

  std::map<int32_t, LinkCalendar> links;
  // A call's start is known once its previous call has ended: ops it issues
  // may be placed before the call itself (it may block for them).
  auto call_start = [&](uint32_t c) {
    const HostCall& call = input.calls[c];
    if (call.previous < 0) return timing.call_first_start[c];
    return t.end[call.previous] + timing.call_gap[c];
  };
  auto latest_dependency = [&](uint32_t node) {
    Dependency latest{0, DepReason::None};
    int64_t latest_end = INT64_MIN;
    for (uint32_t d = graph.deps_begin[node]; d < graph.deps_begin[node + 1]; ++d) {
      const Dependency& dep = graph.deps[d];
      if (t.end[dep.node] > latest_end) {
        latest_end = t.end[dep.node];
        latest = dep;
      }
    }
    return std::make_pair(latest, latest_end);
  };

  for (uint32_t node : graph.order) {
    auto [dependency, dependency_end] = latest_dependency(node);
    if (graph.is_call(node)) {
      const HostCall& call = input.calls[node];
      t.start[node] = call_start(node);
      t.call_start_bound_by[node] =
          call.previous >= 0 ? Dependency{static_cast<uint32_t>(call.previous), DepReason::Host}
                             : Dependency{0, DepReason::None};
      bool blocks = graph.deps_begin[node] != graph.deps_begin[node + 1];
      if (!blocks) {
        t.end[node] = t.start[node] + timing.call_duration[node];
        t.bound_by[node] = t.call_start_bound_by[node];
      } else if (dependency_end + timing.call_tail[node] > t.start[node] + timing.call_own[node]) {
        t.end[node] = dependency_end + timing.call_tail[node];
        t.bound_by[node] = dependency;
      } else {
        t.end[node] = t.start[node] + timing.call_own[node];
        t.bound_by[node] = t.call_start_bound_by[node];
      }
      continue;
    }
    uint32_t op = node - graph.calls;
    const ReplayOp& record = input.ops[op];
    t.issue[op] = record.call >= 0 ? call_start(record.call) + timing.issue_offset[op] : record.issue_ns;
    int64_t start = t.issue[op] + timing.launch[op];
    Dependency bound = record.call >= 0 ? Dependency{static_cast<uint32_t>(record.call), DepReason::Issue}
                                        : Dependency{0, DepReason::None};
    if (dependency.reason != DepReason::None && dependency_end + timing.gap[op] > start) {
      start = dependency_end + timing.gap[op];
      bound = dependency;
    }
    if (timing.link[op] >= 0) {
      auto [booked, waited_for] = links[timing.link[op]].book(start, timing.duration[op], node);
      if (waited_for >= 0 && booked > start) bound = {static_cast<uint32_t>(waited_for), DepReason::Link};
      start = booked;
    }
    t.start[node] = start;
    t.end[node] = start + timing.duration[op];
    t.bound_by[node] = bound;
  }
  t.last_ns = t.first_ns;
  for (uint32_t n = 0; n < nodes; ++n) {
    if (t.end[n] >= t.last_ns) {
      t.last_ns = t.end[n];
      t.last_node = n;
    }
  }
  return t;
}

}  // namespace apptracer::whatif
