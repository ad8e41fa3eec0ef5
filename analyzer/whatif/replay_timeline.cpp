#include "analyzer/whatif/replay_timeline.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <map>
#include <tuple>
#include <utility>

#include "apptracer/saturating.h"

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
    while (next != busy_.end() && next->first < saturating_add(start, duration)) {
      if (next->second.end > start) {
        start = next->second.end;
        waited_for = next->second.node;
      }
      ++next;
    }
    busy_.emplace_hint(next, start, Booking{saturating_add(start, duration), node});
    return {start, waited_for};
  }

 private:
  struct Booking {
    int64_t end;
    uint32_t node;
  };
  std::multimap<int64_t, Booking> busy_;
};

// When each link is busy in a replay: sorted, disjoint [start, end) spans.
using Busy = std::vector<std::pair<int64_t, int64_t>>;

std::map<int32_t, Busy> busy_links(const NodeTiming& timing, const ReplayGraph& graph, const Timeline& t) {
  std::map<int32_t, Busy> busy;
  for (uint32_t op = 0; op < timing.link.size(); ++op) {
    uint32_t node = graph.op_node(op);
    if (timing.link[op] >= 0 && t.end[node] > t.start[node]) {
      busy[timing.link[op]].emplace_back(t.start[node], t.end[node]);
    }
  }
  for (auto& [link, spans] : busy) {
    std::sort(spans.begin(), spans.end());
    Busy merged;
    for (const auto& span : spans) {
      if (!merged.empty() && span.first <= merged.back().second) {
        merged.back().second = std::max(merged.back().second, span.second);
      } else {
        merged.push_back(span);
      }
    }
    spans = std::move(merged);
  }
  return busy;
}

// The first span of `busy` that ends after `at`.
Busy::const_iterator first_ending_after(const Busy& busy, int64_t at) {
  return std::upper_bound(busy.begin(), busy.end(), at,
                          [](int64_t t, const std::pair<int64_t, int64_t>& span) { return t < span.second; });
}

// Where a copy taking `alone` ns at full speed from `start` ends, moving at
// `share` of that speed while `other` is busy. Times are counted from
// `start` in the doubles: trace clocks are nanoseconds since the epoch,
// beyond a double's exact integers, where each would round to 256 ns.
int64_t progressive_end(int64_t start, int64_t alone, double share, const Busy& other) {
  auto since_start = [start](int64_t t) { return static_cast<double>(saturating_sub(t, start)); };
  double left = static_cast<double>(alone);
  double now = 0;
  auto span = first_ending_after(other, start);
  for (; span != other.end(); ++span) {
    double idle = std::max(0.0, since_start(span->first) - now);
    if (idle >= left) break;
    left -= idle;
    now += idle;
    double shared = (since_start(span->second) - now) * share;
    if (shared >= left) return saturating_add(start, saturating_round(now + left / share));
    left -= shared;
    now = since_start(span->second);
  }
  return saturating_add(start, saturating_round(now + left));
}

bool overlaps(int64_t start, int64_t end, const Busy& other) {
  auto span = first_ending_after(other, start);
  return span != other.end() && span->first < end;
}

Timeline replay(const ReplayInput& input, const ReplayGraph& graph, const NodeTiming& timing) {
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
  // A call's start is known once its previous call (and the call that woke
  // its thread) has ended: ops it issues may be placed before the call
  // itself (it may block for them). A woken thread idled until then: it
  // needs only its previous call to have returned.
  auto call_start = [&](uint32_t c) -> std::pair<int64_t, Dependency> {
    const HostCall& call = input.calls[c];
    if (call.woken_by >= 0) {
      auto waker = static_cast<uint32_t>(call.woken_by);
      int64_t woken = saturating_add(t.end[waker], timing.call_wake[c]);
      if (call.previous < 0 || woken >= t.end[call.previous]) return {woken, {waker, DepReason::Thread}};
      return {t.end[call.previous], {static_cast<uint32_t>(call.previous), DepReason::Host}};
    }
    if (call.previous < 0) return {timing.call_first_start[c], {0, DepReason::None}};
    return {saturating_add(t.end[call.previous], timing.call_gap[c]),
            {static_cast<uint32_t>(call.previous), DepReason::Host}};
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
    if (graph.is_call(node)) {
      auto [dependency, dependency_end] = latest_dependency(node);
      std::tie(t.start[node], t.call_start_bound_by[node]) = call_start(node);
      bool blocks = graph.deps_begin[node] != graph.deps_begin[node + 1];
      int64_t awaited = saturating_add(dependency_end, timing.call_tail[node]);
      int64_t own = saturating_add(t.start[node], timing.call_own[node]);
      if (!blocks) {
        t.end[node] = saturating_add(t.start[node], timing.call_duration[node]);
        t.bound_by[node] = t.call_start_bound_by[node];
      } else if (awaited > own) {
        t.end[node] = awaited;
        t.bound_by[node] = dependency;
      } else {
        t.end[node] = own;
        t.bound_by[node] = t.call_start_bound_by[node];
      }
      continue;
    }
    uint32_t op = node - graph.calls;
    const ReplayOp& record = input.ops[op];
    t.issue[op] = record.call >= 0 ? saturating_add(call_start(record.call).first, timing.issue_offset[op])
                                   : record.issue_ns;
    int64_t start = saturating_add(t.issue[op], timing.launch[op]);
    Dependency bound = record.call >= 0 ? Dependency{static_cast<uint32_t>(record.call), DepReason::Issue}
                                        : Dependency{0, DepReason::None};
    for (uint32_t d = graph.deps_begin[node]; d < graph.deps_begin[node + 1]; ++d) {
      const Dependency& dep = graph.deps[d];
      int64_t gap = dep.reason == DepReason::Stream ? timing.lane_gap[op] : timing.gap[op];
      int64_t after_dependency = saturating_add(t.end[dep.node], gap);
      if (after_dependency > start) {
        start = after_dependency;
        bound = dep;
      }
    }
    if (timing.link[op] >= 0) {
      auto [booked, waited_for] = links[timing.link[op]].book(start, timing.duration[op], node);
      if (waited_for >= 0 && booked > start) bound = {static_cast<uint32_t>(waited_for), DepReason::Link};
      start = booked;
    }
    t.start[node] = start;
    t.end[node] = saturating_add(start, timing.duration[op]);
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

}  // namespace

Timeline simulate(const ReplayInput& input, const ReplayGraph& graph, const NodeTiming& timing) {
  Timeline t = replay(input, graph, timing);
  bool duplex = false;
  for (int32_t opposite : timing.opposite_link) duplex |= opposite >= 0;
  if (!duplex) {
    t.opposed.assign(input.ops.size(), false);
    return t;
  }
  NodeTiming stretched = timing;
  for (int replays = 1;; ++replays) {
    std::map<int32_t, Busy> busy = busy_links(timing, graph, t);
    std::vector<int64_t> durations = timing.duration;
    bool settled = true;
    for (uint32_t op = 0; op < input.ops.size(); ++op) {
      int32_t link = timing.link[op];
      if (link < 0 || timing.opposite_link[link] < 0) continue;
      const Busy& other = busy[timing.opposite_link[link]];
      int64_t start = t.start[graph.op_node(op)];
      int64_t end = progressive_end(start, timing.duration[op], timing.duplex[op], other);
      durations[op] = elapsed_ns(start, end);
      int64_t change = saturating_sub(std::max(durations[op], stretched.duration[op]),
                                      std::min(durations[op], stretched.duration[op]));
      settled &= change <= 1;
    }
    if (settled || replays == kMostReplays) {
      t.opposed.assign(input.ops.size(), false);
      for (uint32_t op = 0; op < input.ops.size(); ++op) {
        int32_t link = timing.link[op];
        uint32_t node = graph.op_node(op);
        t.opposed[op] = link >= 0 && timing.opposite_link[link] >= 0 &&
                        overlaps(t.start[node], t.end[node], busy[timing.opposite_link[link]]);
      }
      t.replays = replays;
      t.settled = settled;
      return t;
    }
    stretched.duration = std::move(durations);
    t = replay(input, graph, stretched);
  }
}

}  // namespace apptracer::whatif
