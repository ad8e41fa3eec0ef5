#include "analyzer/dvdg/graph_view.h"

#include <algorithm>
#include <functional>
#include <unordered_map>
#include <unordered_set>

namespace apptracer::dvdg {

namespace {

bool is_data_op(const Op& op) { return !is_lifetime_op(op.kind); }

bool op_selected(const Op& op, const ViewFilter& filter) {
  if (!is_data_op(op)) return false;
  if (filter.from_ns && op.end_ns < *filter.from_ns) return false;
  if (filter.to_ns && op.start_ns > *filter.to_ns) return false;
  if (filter.device && op.device != filter.device) return false;
  if (!filter.issue_windows.empty()) {
    bool inside = std::any_of(filter.issue_windows.begin(), filter.issue_windows.end(),
                              [&](const auto& window) {
                                return op.issue_ns >= window.first && op.issue_ns <= window.second;
                              });
    if (!inside) return false;
  }
  return true;
}

// What an operation did, independent of which iteration it belongs to: its
// kind and name and the memory it read and wrote, by address (a framework
// allocator gives each iteration new tensors, usually in the same blocks).
uint64_t op_signature(const Graph& graph, uint32_t op) {
  const Op& record = graph.ops[op];
  auto mix = [](uint64_t seed, uint64_t value) {
    return seed ^
           (std::hash<uint64_t>()(value) + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2));
  };
  uint64_t signature =
      mix(static_cast<uint64_t>(record.kind), static_cast<uint64_t>(record.copy_kind));
  signature = mix(signature, static_cast<uint64_t>(record.name_id));
  signature = mix(signature, static_cast<uint64_t>(record.bytes));
  // Migrations of the same bytes in opposite directions are different ops.
  signature = mix(signature, (static_cast<uint64_t>(static_cast<uint16_t>(record.from)) << 16) |
                                 static_cast<uint16_t>(record.to));
  auto where = [&](uint32_t value) {
    if (value == kAccessSet) return ~uint64_t{0};
    const Value& record = graph.values[value];
    return (static_cast<uint64_t>(graph.locations[record.location].address) +
            static_cast<uint64_t>(record.offset)) ^
           (static_cast<uint64_t>(record.bytes) << 1);
  };
  for (uint32_t i = graph.op_writes_begin[op]; i < graph.op_writes_begin[op + 1]; ++i) {
    signature = mix(signature, where(graph.op_writes[i]));
  }
  // Its held edges say what its dependences say, in fewer.
  graph.for_each_held_edge(op, [&](const Edge& edge) {
    signature = mix(mix(signature, where(edge.src_value)), static_cast<uint64_t>(edge.kind));
  });
  return signature;
}

// A block of operations repeated back to back: positions [start, start +
// iterations * period) of the view's ops, each later iteration standing for
// the first.
struct Repetition {
  uint32_t start = 0, period = 0, iterations = 0;

  // The position the op at `position` stands for.
  uint32_t first(size_t position) const { return static_cast<uint32_t>(start + (position - start) % period); }
};

// Finds runs where a block of operations repeats back to back, by position
// in `ops`, and sets the repeat count of each first-iteration op. The runs,
// not a position per op: a million-op view's were held beside the values'
// aliases at the report's DVDG section's peak.
std::vector<Repetition> collapse_iterations(const Graph& graph, const std::vector<uint32_t>& ops,
                                            std::vector<uint32_t>& repeats) {
  uint32_t count = static_cast<uint32_t>(ops.size());
  std::vector<uint64_t> signatures(count);
  for (size_t i = 0; i < count; ++i) signatures[i] = op_signature(graph, ops[i]);
  // next_same[i]: the next position with the same signature, or count.
  std::vector<uint32_t> next_same(count, count);
  std::unordered_map<uint64_t, uint32_t> seen;
  for (uint32_t i = count; i-- > 0;) {
    auto found = seen.find(signatures[i]);
    if (found != seen.end()) next_same[i] = found->second;
    seen[signatures[i]] = i;
  }
  auto same_block = [&](size_t a, size_t b, size_t length) {
    return b + length <= count &&
           std::equal(signatures.begin() + a, signatures.begin() + a + length,
                      signatures.begin() + b);
  };
  constexpr int kPeriodsTried = 16;
  std::vector<Repetition> runs;
  size_t start = 0;
  while (start < count) {
    size_t period = 0;
    size_t candidate = next_same[start];
    for (int tries = 0; tries < kPeriodsTried && candidate < count; ++tries) {
      if (same_block(start, candidate, candidate - start)) {
        period = candidate - start;
        break;
      }
      candidate = next_same[candidate];
    }
    if (period == 0) {
      ++start;
      continue;
    }
    size_t iterations = 2;
    while (same_block(start, start + iterations * period, period)) ++iterations;
    for (size_t k = 0; k < period; ++k) repeats[ops[start + k]] = static_cast<uint32_t>(iterations);
    runs.push_back({static_cast<uint32_t>(start), static_cast<uint32_t>(period), static_cast<uint32_t>(iterations)});
    start += iterations * period;
  }
  return runs;
}

}  // namespace

GraphView make_view(const Graph& graph, const ViewFilter& filter) {
  GraphView view;
  view.repeats.assign(graph.ops.size(), 1);
  std::vector<uint32_t> selected;
  selected.reserve(graph.ops.size());
  for (uint32_t op = 0; op < graph.ops.size(); ++op) {
    if (op_selected(graph.ops[op], filter)) selected.push_back(op);
  }

  // An op of a later iteration stands for the matching op of the first
  // (empty when nothing is collapsed), and the values it wrote for the
  // matching values that op wrote. By op, not by value: a million-op
  // trace's seven million values' aliases were the report's peak.
  std::vector<uint32_t> first_of;
  std::vector<bool> folded(graph.ops.size(), false);
  bool any_folded = false;
  if (filter.collapse_iterations) {
    // The aliases after the iterations are found: the finding's own room
    // is given back first.
    std::vector<Repetition> runs = collapse_iterations(graph, selected, view.repeats);
    first_of.resize(graph.ops.size());
    for (const Repetition& run : runs) {
      for (size_t i = run.start + run.period; i < size_t{run.start} + size_t{run.iterations} * run.period; ++i) {
        folded[selected[i]] = true;
        first_of[selected[i]] = selected[run.first(i)];
        any_folded = true;
      }
    }
  }
  auto shown_as = [&](uint32_t value) {
    if (value == kAccessSet || !any_folded) return value;
    uint32_t op = graph.values[value].producer_op;
    if (op == Value::kNoOp || !folded[op]) return value;
    uint32_t begin = graph.op_writes_begin[op], end = graph.op_writes_begin[op + 1];
    // Its place among the op's writes: an op's values are numbered in the
    // order it wrote them, so mostly where its number says.
    uint32_t k = value - graph.op_writes[begin];
    if (value < graph.op_writes[begin] || k >= end - begin || graph.op_writes[begin + k] != value) {
      k = static_cast<uint32_t>(std::find(graph.op_writes.begin() + begin, graph.op_writes.begin() + end, value) -
                                (graph.op_writes.begin() + begin));
      if (k == end - begin) return value;
    }
    return graph.op_writes[graph.op_writes_begin[first_of[op]] + k];
  };

  std::unordered_set<int64_t> allocations(filter.alloc_ids.begin(), filter.alloc_ids.end());
  auto value_visible = [&](uint32_t value) {
    return value == kAccessSet || graph.locations[graph.values[value].location].bytes >= filter.min_bytes;
  };
  auto in_allocations = [&](uint32_t value) {
    if (value == kAccessSet) return false;
    const Location& where = graph.locations[graph.values[value].location];
    return where.alloc_id && allocations.count(*where.alloc_id) > 0;
  };

  // Calls shown(op, src, dst, edge) for each edge shown, and marks what it shows.
  std::vector<bool> value_shown(graph.values.size(), false);
  std::vector<bool> op_shown(graph.ops.size(), false);
  std::vector<bool> set_shown(graph.ops.size(), false);
  std::unordered_set<uint64_t> edges_seen;
  auto for_each_shown_edge = [&](auto&& shown) {
    for (uint32_t op : selected) {
      if (folded[op]) continue;
      edges_seen.clear();
      auto show = [&](const Edge& edge) {
        uint32_t src = shown_as(edge.src_value);
        uint32_t dst = edge.dst_value;
        if (!value_visible(src) || !value_visible(dst)) return;
        if (!allocations.empty() && !in_allocations(src) && !in_allocations(dst)) return;
        // Collapsing can make two edges of one op join the same two values.
        if (any_folded && !edges_seen.insert((uint64_t{src} << 32) | dst).second) return;
        shown(src, dst, edge);
        for (uint32_t value : {src, dst}) {
          if (value == kAccessSet) set_shown[op] = true;
          else value_shown[value] = true;
        }
        op_shown[op] = true;
      };
      if (filter.access_sets) graph.for_each_held_edge(op, show);
      else graph.for_each_edge(op, show);
      // A value nothing has read yet (a memset's result, say) is still shown.
      for (uint32_t i = graph.op_writes_begin[op]; i < graph.op_writes_begin[op + 1]; ++i) {
        uint32_t value = graph.op_writes[i];
        if (!value_visible(value) || (!allocations.empty() && !in_allocations(value))) continue;
        value_shown[value] = true;
        op_shown[op] = true;
      }
    }
  };
  // What for_each_shown_edge marks, without visiting each edge: a kernel's
  // dependences are every value it read by every value it wrote (a foreach
  // kernel's, hundreds by hundreds), and without an allocation filter a
  // read is shown when it and any value the kernel wrote are visible.
  auto mark_shown = [&] {
    for (uint32_t op : selected) {
      if (folded[op]) continue;
      auto mark = [&](uint32_t value) {
        if (value == kAccessSet) set_shown[op] = true;
        else value_shown[value] = true;
        op_shown[op] = true;
      };
      bool writes_visible = false;
      for (uint32_t i = graph.op_writes_begin[op]; i < graph.op_writes_begin[op + 1]; ++i) {
        if (!value_visible(graph.op_writes[i])) continue;
        writes_visible = true;
        mark(graph.op_writes[i]);
      }
      auto see = [&](const Edge& edge) {
        uint32_t src = shown_as(edge.src_value);
        if (!value_visible(src) || !value_visible(edge.dst_value)) return;
        mark(src);
        mark(edge.dst_value);
      };
      if (filter.access_sets || graph.ops[op].kind != OpKind::Kernel) {
        filter.access_sets ? graph.for_each_held_edge(op, see) : graph.for_each_edge(op, see);
        continue;
      }
      if (writes_visible) {
        for (uint32_t r = graph.op_reads_begin[op]; r < graph.op_reads_begin[op + 1]; ++r) {
          uint32_t src = shown_as(graph.op_reads[r]);
          if (value_visible(src)) mark(src);
        }
      }
      for (uint32_t e = graph.op_listed_edges[op]; e < graph.op_listed_edges[op + 1]; ++e) see(graph.listed_edges[e]);
    }
  };
  if (filter.value_limit == SIZE_MAX) {
    for_each_shown_edge(
        [&](uint32_t src, uint32_t dst, const Edge& edge) { view.edges.push_back({src, dst, edge}); });
  } else {
    // What is shown first, then the edges between the first values.
    if (allocations.empty()) mark_shown();
    else for_each_shown_edge([](uint32_t, uint32_t, const Edge&) {});
    size_t counted = 0;
    uint32_t last = 0;
    for (uint32_t value = 0; value < graph.values.size() && counted < filter.value_limit; ++value) {
      if (value_shown[value]) ++counted, last = value;
    }
    auto within = [&](uint32_t value) { return value == kAccessSet || value <= last; };
    // An edge goes into a value its op wrote: an op that wrote none of the
    // first values has none between them (unless into an access set).
    std::vector<uint32_t> first_ops;
    for (uint32_t op : selected) {
      bool writes_within = filter.access_sets && graph.ops[op].access_set;
      for (uint32_t i = graph.op_writes_begin[op]; i < graph.op_writes_begin[op + 1] && !writes_within; ++i)
        writes_within = graph.op_writes[i] <= last;
      for (uint32_t e = graph.op_listed_edges[op]; e < graph.op_listed_edges[op + 1] && !writes_within; ++e)
        writes_within = within(graph.listed_edges[e].dst_value);
      if (writes_within) first_ops.push_back(op);
    }
    selected.swap(first_ops);
    for_each_shown_edge([&](uint32_t src, uint32_t dst, const Edge& edge) {
      if (counted > 0 && within(src) && within(dst)) view.edges.push_back({src, dst, edge});
    });
    selected.swap(first_ops);
  }
  for (uint32_t value = 0; value < graph.values.size(); ++value) {
    if (!value_shown[value]) continue;
    if (view.values_shown++ < filter.value_limit) view.values.push_back(value);
  }
  for (uint32_t op = 0; op < graph.ops.size(); ++op) {
    if (op_shown[op]) view.ops.push_back(op);
    if (set_shown[op]) view.access_sets.push_back(op);
  }
  return view;
}

}  // namespace apptracer::dvdg
