#include "graph_builder.h"

#include <algorithm>

#include "program_order.h"

namespace apptracer::dvdg {

namespace {

constexpr uint32_t kNoValue = UINT32_MAX;

// Rearranges ops into program order in place (following the permutation's
// cycles), so a million-op trace is not held twice.
std::vector<Op> in_program_order(std::vector<Op>&& ops, const std::vector<uint32_t>& order) {
  std::vector<bool> placed(ops.size(), false);
  for (size_t start = 0; start < ops.size(); ++start) {
    if (placed[start]) continue;
    // Position p takes the op from order[p]; walk the cycle starting at `start`.
    Op first = std::move(ops[start]);
    size_t position = start;
    while (true) {
      placed[position] = true;
      size_t from = order[position];
      if (from == start) {
        ops[position] = std::move(first);
        break;
      }
      ops[position] = std::move(ops[from]);
      position = from;
    }
  }
  return std::move(ops);
}

class Builder {
 public:
  explicit Builder(TraceOps&& trace) : trace_(std::move(trace)) {
    current_.assign(trace_.locations.size(), kNoValue);
    opaque_kernels_at_creation_.assign(trace_.locations.size(), 0);
  }

  Graph build(const std::vector<uint32_t>& order) {
    graph_.ops = in_program_order(std::move(trace_.ops), order);
    renumber_causes(order);
    graph_.op_edges.reserve(order.size() + 1);
    graph_.op_writes_begin.reserve(order.size() + 1);
    for (uint32_t op = 0; op < order.size(); ++op) apply(op, order[op]);
    graph_.op_edges.push_back(static_cast<uint32_t>(graph_.edges.size()));
    graph_.op_writes_begin.push_back(static_cast<uint32_t>(graph_.op_writes.size()));
    graph_.locations = std::move(trace_.locations);
    graph_.names = std::move(trace_.names);
    return std::move(graph_);
  }

 private:
  // Reads of one operation, gathered before any of its writes.
  struct Read {
    uint32_t value;
    int64_t bytes;
    bool uninitialized;
  };

  // Ops point at the op that caused them by trace position; the graph speaks
  // in program-order positions.
  void renumber_causes(const std::vector<uint32_t>& order) {
    std::vector<uint32_t> position;
    for (uint32_t p = 0; p < order.size(); ++p) {
      uint32_t& cause = graph_.ops[p].caused_by;
      if (cause == Op::kNoOp) continue;
      if (position.empty()) {
        position.resize(order.size());
        for (uint32_t q = 0; q < order.size(); ++q) position[order[q]] = q;
      }
      cause = position[cause];
    }
  }

  uint32_t new_value(uint32_t location, uint32_t version, uint32_t producer, bool holds_data,
                     int16_t residency) {
    if (version == 0) opaque_kernels_at_creation_[location] = opaque_kernels_seen_;
    Value value;
    value.location = location;
    value.version = version;
    value.producer_op = producer;
    value.holds_data = holds_data;
    value.residency = trace_.locations[location].is_managed() ? residency : kNoResidency;
    graph_.values.push_back(value);
    return current_[location] = static_cast<uint32_t>(graph_.values.size() - 1);
  }

  // The location's current value; version 0 appears the first time the
  // location is touched (its allocation, or first use of an unknown region).
  uint32_t current(uint32_t location, uint32_t op) {
    if (current_[location] == kNoValue) {
      // Managed memory is populated where it is first touched; without a
      // record of that, version 0 is taken to be on the host, whose
      // accesses the tracer cannot see.
      return new_value(location, 0, op, trace_.locations[location].starts_with_data,
                       kHostResidency);
    }
    return current_[location];
  }

  // Version 0 of device memory holds no data, unless a kernel whose arguments
  // were not captured ran since it was allocated: that kernel may have written it.
  bool may_hold_data(uint32_t value) const {
    const Value& record = graph_.values[value];
    return record.holds_data ||
           opaque_kernels_seen_ > opaque_kernels_at_creation_[record.location];
  }

  // Several kernel arguments may point into the same allocation: one access
  // per location, with the union of what they do.
  void merge_accesses(uint32_t source) {
    accesses_.assign(trace_.accesses.begin() + trace_.access_begin[source],
                     trace_.accesses.begin() + trace_.access_begin[source + 1]);
    if (accesses_.size() < 2) return;
    std::stable_sort(accesses_.begin(), accesses_.end(),
                     [](const Access& a, const Access& b) { return a.location < b.location; });
    size_t kept = 0;
    for (size_t i = 0; i < accesses_.size(); ++i) {
      if (kept > 0 && accesses_[kept - 1].location == accesses_[i].location) {
        Access& merged = accesses_[kept - 1];
        merged.reads |= accesses_[i].reads;
        merged.writes |= accesses_[i].writes;
        merged.known_read |= accesses_[i].known_read;
        merged.whole |= accesses_[i].whole;
      } else {
        accesses_[kept++] = accesses_[i];
      }
    }
    accesses_.resize(kept);
  }

  // Op `op` of the program order is trace op `source`.
  void apply(uint32_t op, uint32_t source) {
    graph_.op_edges.push_back(static_cast<uint32_t>(graph_.edges.size()));
    graph_.op_writes_begin.push_back(static_cast<uint32_t>(graph_.op_writes.size()));
    Op& record = graph_.ops[op];
    merge_accesses(source);

    if (record.kind == OpKind::Allocation || record.kind == OpKind::Free) {
      for (const Access& access : accesses_) {
        uint32_t value = current(access.location, op);
        if (record.kind == OpKind::Free) graph_.values[value].freed_by_op = op;
      }
      return;
    }

    if (record.kind == OpKind::Migration) {
      migrate(op);
      return;
    }
    if (record.arguments_unknown) ++opaque_kernels_seen_;
    reads_.clear();
    for (const Access& access : accesses_) {
      if (!access.reads) continue;
      uint32_t value = current(access.location, op);
      Value& read = graph_.values[value];
      if (may_hold_data(value)) {
        reads_.push_back({value, access.bytes, false});
      } else if (access.known_read) {
        // Version 0 of device memory holds nothing: only a certain read of
        // it is worth an edge, and that edge is a bug report.
        read.read_uninitialized = true;
        record.reads_uninitialized = true;
        reads_.push_back({value, access.bytes, true});
      }
    }
    for (const Access& access : accesses_) {
      if (!access.writes) continue;
      uint32_t previous = current(access.location, op);
      uint32_t written = new_value(access.location, graph_.values[previous].version + 1, op, true,
                                   written_residency(record, previous));
      graph_.op_writes.push_back(written);
      bool previous_read = false;
      for (const Read& read : reads_) {
        graph_.edges.push_back(
            {read.value, written, op, EdgeKind::Data, read.uninitialized, read.bytes});
        previous_read |= read.value == previous;
      }
      // A write that may leave part of the location as it was depends on
      // what was there, unless that held no data.
      if (!access.whole && !previous_read && may_hold_data(previous)) {
        int64_t kept =
            access.bytes >= 0
                ? std::max<int64_t>(0, trace_.locations[access.location].bytes - access.bytes)
                : -1;
        graph_.edges.push_back({previous, written, op, EdgeKind::Carry, false, kept});
      }
    }
  }

  // A kernel writes managed memory where it runs; copies and memsets are
  // taken to leave it where it was (the driver decides, and says so only
  // through migrations).
  int16_t written_residency(const Op& writer, uint32_t previous) const {
    if (writer.kind == OpKind::Kernel && writer.device)
      return static_cast<int16_t>(*writer.device);
    return graph_.values[previous].residency;
  }

  // A migration moves the location's current value: same content, same
  // version, another residency.
  void migrate(uint32_t op) {
    const Op& record = graph_.ops[op];
    for (const Access& access : accesses_) {
      uint32_t previous = current(access.location, op);
      const Value& source = graph_.values[previous];
      uint32_t moved =
          new_value(access.location, source.version, op, source.holds_data, record.to);
      graph_.op_writes.push_back(moved);
      graph_.edges.push_back({previous, moved, op, EdgeKind::Migration, false, access.bytes});
    }
  }

  TraceOps trace_;
  Graph graph_;
  std::vector<uint32_t> current_;  // per location: its latest value
  uint32_t opaque_kernels_seen_ = 0;  // kernels so far whose arguments are unknown
  std::vector<uint32_t> opaque_kernels_at_creation_;  // per location: at its version 0
  std::vector<Access> accesses_;
  std::vector<Read> reads_;
};

}  // namespace

Graph build_graph(TraceOps&& trace, const std::vector<uint32_t>& order) {
  return Builder(std::move(trace)).build(order);
}

Graph build_graph_from_trace(Database& db) {
  TraceOps trace = read_trace_ops(db);
  std::vector<uint32_t> order = program_order(trace);
  return build_graph(std::move(trace), order);
}

}  // namespace apptracer::dvdg
