#include "analyzer/whatif/replay_graph.h"

#include <algorithm>
#include <map>
#include <queue>
#include <stdexcept>
#include <tuple>

#include "analyzer/trace/trace_file.h"

namespace apptracer::whatif {

const char* to_string(DepReason reason) {
  switch (reason) {
    case DepReason::None: return "start";
    case DepReason::Host: return "host";
    case DepReason::Issue: return "issue";
    case DepReason::Stream: return "stream";
    case DepReason::Event: return "event";
    case DepReason::Data: return "data";
    case DepReason::Wait: return "wait";
    case DepReason::Link: return "link";
    case DepReason::Thread: return "thread";
  }
  return "?";
}

namespace {

// A stream, or (moved copies) one device's copy lane for one direction.
struct LaneKey {
  std::optional<int64_t> device;
  std::optional<int64_t> stream;
  int copy_direction = -1;  // a CopyKind for copy lanes, else -1
  bool operator<(const LaneKey& o) const {
    return std::tie(device, stream, copy_direction) < std::tie(o.device, o.stream, o.copy_direction);
  }
};

class Builder {
 public:
  Builder(const ReplayInput& input, const GraphOptions& options)
      : input_(input), options_(options), deps_(input.calls.size() + input.ops.size()) {}

  ReplayGraph build() {
    graph_.calls = static_cast<uint32_t>(input_.calls.size());
    graph_.ops = static_cast<uint32_t>(input_.ops.size());
    assign_lanes();
    add_legacy_order();
    add_event_waits();
    add_data();
    add_syncs();
    add_blocking_copies();
    flatten();
    graph_.order = topological_order();
    return std::move(graph_);
  }

 private:
  bool moved(uint32_t op) const { return op < options_.moved.size() && options_.moved[op]; }

  void assign_lanes() {
    std::map<LaneKey, int32_t> lanes;
    graph_.lane.resize(input_.ops.size());
    graph_.moved.assign(input_.ops.size(), false);
    std::vector<int32_t> last(0);
    for (uint32_t i = 0; i < input_.ops.size(); ++i) {
      const ReplayOp& op = input_.ops[i];
      LaneKey origin{op.device, op.stream, -1};
      int32_t origin_lane = lanes.emplace(origin, static_cast<int32_t>(lanes.size())).first->second;
      LaneKey actual = origin;
      if (moved(i)) {
        actual = {op.device, std::nullopt, static_cast<int>(op.copy_kind)};
        graph_.moved[i] = true;
      }
      int32_t lane = lanes.emplace(actual, static_cast<int32_t>(lanes.size())).first->second;
      graph_.lane[i] = lane;
      if (static_cast<size_t>(lane) >= last.size()) last.resize(lane + 1, -1);
      if (last[lane] >= 0) add(graph_.op_node(i), graph_.op_node(last[lane]), DepReason::Stream);
      last[lane] = static_cast<int32_t>(i);
      // What the host awaits when it synchronizes the op's stream.
      origin_members_[origin_lane][lane].push_back(i);
      origins_.emplace(origin, origin_lane);
    }
  }

  void add(uint32_t node, uint32_t before, DepReason reason) { deps_[node].push_back({before, reason}); }

  StreamKind kind_of(const NullableInt& stream) const {
    if (!stream) return StreamKind::Unknown;
    auto found = input_.stream_kinds.find(*stream);
    return found == input_.stream_kinds.end() ? StreamKind::Unknown : found->second;
  }

  // The origins (streams) of `kind` on `device`.
  std::vector<int32_t> origins_of(StreamKind kind, const std::optional<int64_t>& device) const {
    std::vector<int32_t> found;
    for (const auto& [key, origin] : origins_) {
      if (key.device == device && kind_of(key.stream) == kind) found.push_back(origin);
    }
    return found;
  }

  // The legacy default stream's implicit ordering: an operation on it waits
  // for what was issued before it on the device's blocking streams, and an
  // operation on a blocking stream for what was issued before it on the
  // legacy stream (which waited for the rest). Non-blocking streams, and
  // streams the trace does not describe, take no part.
  void add_legacy_order() {
    if (input_.stream_kinds.empty()) return;
    for (uint32_t i = 0; i < input_.ops.size(); ++i) {
      const ReplayOp& op = input_.ops[i];
      StreamKind kind = kind_of(op.stream);
      if (kind != StreamKind::Legacy && kind != StreamKind::Blocking) continue;
      StreamKind other = kind == StreamKind::Legacy ? StreamKind::Blocking : StreamKind::Legacy;
      for (int32_t origin : origins_of(other, op.device)) await_origin_before(graph_.op_node(i), origin, i);
    }
  }

  // Op node `node` follows, on each lane origin `origin`'s ops went to, the
  // last of them issued before op `limit`.
  void await_origin_before(uint32_t node, int32_t origin, uint32_t limit) {
    for (const auto& [lane, members] : origin_members_[origin]) {
      auto after = std::lower_bound(members.begin(), members.end(), limit);
      if (after != members.begin()) add(node, graph_.op_node(*(after - 1)), DepReason::Stream);
    }
  }

  // The latest record of `handle` issued at or before `ns`.
  std::optional<uint32_t> record_before(int64_t handle, int64_t ns) const {
    auto found = records_.find(handle);
    if (found == records_.end()) return std::nullopt;
    const std::vector<uint32_t>& records = found->second;
    auto after = std::upper_bound(records.begin(), records.end(), ns, [&](int64_t t, uint32_t op) {
      return t < input_.ops[op].issue_ns;
    });
    if (after == records.begin()) return std::nullopt;
    return *(after - 1);
  }

  void add_event_waits() {
    for (uint32_t i = 0; i < input_.ops.size(); ++i) {
      if (input_.ops[i].kind == OpKind::EventRecord) records_[input_.ops[i].event_handle].push_back(i);
    }
    for (uint32_t i = 0; i < input_.ops.size(); ++i) {
      const ReplayOp& wait = input_.ops[i];
      if (wait.kind != OpKind::EventWait) continue;
      if (std::optional<uint32_t> record = record_before(wait.event_handle, wait.issue_ns)) {
        add(graph_.op_node(i), graph_.op_node(*record), DepReason::Event);
      }
    }
  }

  void add_data() {
    for (uint32_t i = 0; i < options_.data.size() && i < input_.ops.size(); ++i) {
      for (uint32_t before : options_.data[i]) add(graph_.op_node(i), graph_.op_node(before), DepReason::Data);
    }
  }

  // Call `node` waits for everything issued on origin lane `origin` up to
  // `ns`: the last such op of each lane the origin's ops went to.
  void await_origin(uint32_t node, int32_t origin, int64_t ns) {
    for (const auto& [lane, members] : origin_members_[origin]) {
      auto after = std::upper_bound(members.begin(), members.end(), ns, [&](int64_t t, uint32_t op) {
        return t < input_.ops[op].issue_ns;
      });
      if (after != members.begin()) add(node, graph_.op_node(*(after - 1)), DepReason::Wait);
    }
  }

  void add_syncs() {
    for (size_t s = 0; s < input_.syncs.size(); ++s) {
      if (s < options_.dropped_syncs.size() && options_.dropped_syncs[s]) continue;
      const SyncCall& sync = input_.syncs[s];
      const HostCall& call = input_.calls[sync.call];
      auto node = static_cast<uint32_t>(sync.call);
      switch (sync.kind) {
        case SyncKind::Device:
        case SyncKind::Context:
          for (const auto& [key, origin] : origins_) {
            if (!sync.device || !key.device || key.device == sync.device) await_origin(node, origin, call.start_ns);
          }
          break;
        case SyncKind::Stream: {
          // The legacy stream's work waits for the blocking streams', so
          // synchronizing it waits for theirs too.
          bool legacy = kind_of(sync.stream) == StreamKind::Legacy;
          for (const auto& [key, origin] : origins_) {
            if (sync.device && key.device && key.device != sync.device) continue;
            if (key.stream == sync.stream || (legacy && kind_of(key.stream) == StreamKind::Blocking)) {
              await_origin(node, origin, call.start_ns);
            }
          }
          break;
        }
        case SyncKind::Event: {
          if (!sync.event_handle) break;
          std::optional<uint32_t> record = record_before(*sync.event_handle, call.start_ns);
          if (!record) break;
          const ReplayOp& marker = input_.ops[*record];
          await_origin(node, origins_.at(LaneKey{marker.device, marker.stream, -1}), marker.issue_ns);
          break;
        }
      }
    }
  }

  void add_blocking_copies() {
    for (uint32_t i = 0; i < options_.blocking.size() && i < input_.ops.size(); ++i) {
      if (options_.blocking[i] && input_.ops[i].call >= 0) {
        add(static_cast<uint32_t>(input_.ops[i].call), graph_.op_node(i), DepReason::Wait);
      }
    }
  }

  void flatten() {
    graph_.deps_begin.assign(deps_.size() + 1, 0);
    for (size_t n = 0; n < deps_.size(); ++n) {
      std::vector<Dependency>& list = deps_[n];
      std::sort(list.begin(), list.end(), [](const Dependency& a, const Dependency& b) {
        return std::tie(a.node, a.reason) < std::tie(b.node, b.reason);
      });
      list.erase(std::unique(list.begin(), list.end(),
                             [](const Dependency& a, const Dependency& b) { return a.node == b.node; }),
                 list.end());
      graph_.deps_begin[n + 1] = graph_.deps_begin[n] + static_cast<uint32_t>(list.size());
      graph_.deps.insert(graph_.deps.end(), list.begin(), list.end());
    }
  }

  // Kahn's algorithm, taking the earliest recorded node first. Besides its
  // time dependencies, a call needs the thread's previous call and the call
  // that woke its thread, and an op those of the call that issued it (its
  // issue time follows from that call's start).
  std::vector<uint32_t> topological_order() const {
    size_t nodes = deps_.size();
    std::vector<std::vector<uint32_t>> after(nodes);
    std::vector<uint32_t> waiting(nodes, 0);
    auto edge = [&](uint32_t from, uint32_t to) {
      after[from].push_back(to);
      ++waiting[to];
    };
    for (uint32_t n = 0; n < nodes; ++n) {
      for (uint32_t d = graph_.deps_begin[n]; d < graph_.deps_begin[n + 1]; ++d) edge(graph_.deps[d].node, n);
    }
    auto call_start_edges = [&](int32_t call, uint32_t to) {
      if (call < 0) return;
      for (int32_t before : {input_.calls[call].previous, input_.calls[call].woken_by}) {
        if (before >= 0) edge(static_cast<uint32_t>(before), to);
      }
    };
    for (uint32_t c = 0; c < graph_.calls; ++c) call_start_edges(static_cast<int32_t>(c), c);
    for (uint32_t i = 0; i < graph_.ops; ++i) call_start_edges(input_.ops[i].call, graph_.op_node(i));
    auto time_of = [&](uint32_t n) {
      return n < graph_.calls ? input_.calls[n].start_ns : input_.ops[n - graph_.calls].issue_ns;
    };
    using Ready = std::pair<int64_t, uint32_t>;
    std::priority_queue<Ready, std::vector<Ready>, std::greater<Ready>> ready;
    for (uint32_t n = 0; n < nodes; ++n) {
      if (waiting[n] == 0) ready.emplace(time_of(n), n);
    }
    std::vector<uint32_t> order;
    order.reserve(nodes);
    while (!ready.empty()) {
      uint32_t n = ready.top().second;
      ready.pop();
      order.push_back(n);
      for (uint32_t next : after[n]) {
        if (--waiting[next] == 0) ready.emplace(time_of(next), next);
      }
    }
    if (order.size() != nodes) {
      throw DamagedTrace("its dependencies are circular, so it cannot be replayed; is the trace damaged?");
    }
    return order;
  }

  const ReplayInput& input_;
  const GraphOptions& options_;
  ReplayGraph graph_;
  std::vector<std::vector<Dependency>> deps_;
  std::map<LaneKey, int32_t> origins_;
  std::map<int32_t, std::map<int32_t, std::vector<uint32_t>>> origin_members_;
  std::map<int64_t, std::vector<uint32_t>> records_;
};

}  // namespace

ReplayGraph build_replay_graph(const ReplayInput& input, const GraphOptions& options) {
  return Builder(input, options).build();
}

}  // namespace apptracer::whatif
