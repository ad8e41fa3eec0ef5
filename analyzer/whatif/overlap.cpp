#include "analyzer/whatif/overlap.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <unordered_map>

#include "apptracer/saturating.h"
#include "analyzer/whatif/op_index.h"

namespace apptracer::whatif {

namespace {

using dvdg::Graph;

// An op's stream as the recording had it, or a moved copy's copy lane.
using OverlapLane = std::tuple<std::optional<int64_t>, std::optional<int64_t>, int>;

// For each value: the values it replaced (those that held its bytes just
// before it; a chunk written into a buffer replaces what held that chunk, not
// the whole buffer), and the ops that read it.
struct ValueHistory {
  std::vector<uint32_t> replaced_begin;  // per value + 1: its range in `replaced`
  std::vector<uint32_t> replaced;
  std::vector<std::vector<uint32_t>> readers;
};

// Which value holds each byte of each location, as values are made in order.
class Holders {
 public:
  explicit Holders(size_t locations) : by_location_(locations) {}

  // Gives [begin, end) of `location` to `value`; adds the values that held
  // any of it to `replaced`.
  void write(uint32_t location, int64_t begin, int64_t end, uint32_t value,
             std::vector<uint32_t>& replaced) {
    Pieces& pieces = by_location_[location];
    auto it = pieces.upper_bound(begin);
    if (it != pieces.begin() && std::prev(it)->second.end > begin) --it;
    while (it != pieces.end() && it->first < end) {
      Piece piece = it->second;
      int64_t piece_begin = it->first;
      if (replaced.empty() || replaced.back() != piece.value) replaced.push_back(piece.value);
      it = pieces.erase(it);
      if (piece_begin < begin) pieces.emplace(piece_begin, Piece{begin, piece.value});
      if (piece.end > end) pieces.emplace(end, Piece{piece.end, piece.value});
    }
    pieces.emplace(begin, Piece{end, value});
  }

 private:
  struct Piece {
    int64_t end;
    uint32_t value;
  };
  using Pieces = std::map<int64_t, Piece>;
  std::vector<Pieces> by_location_;
};

ValueHistory value_history(const Graph& graph) {
  ValueHistory history;
  history.replaced_begin.reserve(graph.values.size() + 1);
  history.replaced_begin.push_back(0);
  history.readers.resize(graph.values.size());
  Holders holders(graph.locations.size());
  for (uint32_t v = 0; v < graph.values.size(); ++v) {
    const dvdg::Value& value = graph.values[v];
    holders.write(value.location, value.offset, saturating_add(value.offset, std::max<int64_t>(value.bytes, 1)),
                  v, history.replaced);
    history.replaced_begin.push_back(static_cast<uint32_t>(history.replaced.size()));
  }
  // Edges come by op, so an op reading a value into several it wrote is
  // one reader of it.
  graph.for_each_edge([&](const dvdg::Edge& edge) {
    std::vector<uint32_t>& readers = history.readers[edge.src_value];
    if (edge.kind != dvdg::EdgeKind::Carry && (readers.empty() || readers.back() != edge.op))
      readers.push_back(edge.op);
  });
  return history;
}

}  // namespace

OverlapPlan plan_overlap(const ReplayInput& input, const Graph& graph) {
  OverlapPlan plan;
  size_t ops = input.ops.size();
  plan.moved.assign(ops, false);
  plan.data.resize(ops);

  auto origin = [&](const ReplayOp& op) { return OverlapLane{op.device, op.stream, -1}; };
  std::set<OverlapLane> kernel_lanes;
  for (const ReplayOp& op : input.ops) {
    if (op.kind == OpKind::Kernel) kernel_lanes.insert(origin(op));
  }
  for (uint32_t i = 0; i < ops; ++i) {
    const ReplayOp& op = input.ops[i];
    if (op.kind == OpKind::Copy && kernel_lanes.count(origin(op))) {
      plan.moved[i] = true;
      ++plan.moved_copies;
    }
  }
  auto lane = [&](uint32_t i) {
    const ReplayOp& op = input.ops[i];
    return plan.moved[i] ? OverlapLane{op.device, std::nullopt, static_cast<int>(op.copy_kind)} : origin(op);
  };

  OpIndex index(input);
  std::vector<std::optional<uint32_t>> replay_of(graph.ops.size());
  std::vector<bool> unknown_arguments(ops, false);
  for (uint32_t g = 0; g < graph.ops.size(); ++g) {
    replay_of[g] = index.find(graph.ops[g]);
    if (replay_of[g] && graph.ops[g].arguments_unknown) unknown_arguments[*replay_of[g]] = true;
  }

  ValueHistory history = value_history(graph);
  auto producer = [&](uint32_t value) -> std::optional<uint32_t> {
    uint32_t op = graph.values[value].producer_op;
    if (op == dvdg::Value::kNoOp) return std::nullopt;
    return replay_of[op];
  };
  // Keeps `before` -> `after` when one of them moved and `before` was issued first.
  std::vector<std::vector<uint32_t>> found(ops);
  auto depend = [&](std::optional<uint32_t> before, uint32_t after) {
    if (!before || *before >= after || (!plan.moved[*before] && !plan.moved[after])) return;
    found[after].push_back(*before);
  };
  for (uint32_t g = 0; g < graph.ops.size(); ++g) {
    if (!replay_of[g]) continue;
    uint32_t op = *replay_of[g];
    graph.for_each_edge(g, [&](const dvdg::Edge& edge) {
      if (edge.kind != dvdg::EdgeKind::Carry) depend(producer(edge.src_value), op);
    });
    for (uint32_t w = graph.op_writes_begin[g]; w < graph.op_writes_begin[g + 1]; ++w) {
      uint32_t written = graph.op_writes[w];
      for (uint32_t r = history.replaced_begin[written]; r < history.replaced_begin[written + 1]; ++r) {
        uint32_t previous = history.replaced[r];
        depend(producer(previous), op);
        for (uint32_t reader : history.readers[previous]) {
          if (reader != g) depend(replay_of[reader], op);
        }
      }
    }
  }

  // A kernel whose arguments are unknown may touch anything: moved copies
  // keep their place relative to it on the stream they came from.
  std::map<OverlapLane, std::vector<uint32_t>> unknown_kernels;
  for (uint32_t i = 0; i < ops; ++i) {
    if (unknown_arguments[i]) unknown_kernels[origin(input.ops[i])].push_back(i);
  }
  for (uint32_t i = 0; i < ops; ++i) {
    if (!plan.moved[i]) continue;
    auto kernels = unknown_kernels.find(origin(input.ops[i]));
    if (kernels == unknown_kernels.end()) continue;
    auto after = std::upper_bound(kernels->second.begin(), kernels->second.end(), i);
    if (after != kernels->second.begin()) found[i].push_back(*(after - 1));
    if (after != kernels->second.end()) found[*after].push_back(i);
  }

  // Of several predecessors on one lane, the latest implies the others.
  for (uint32_t i = 0; i < ops; ++i) {
    std::map<OverlapLane, uint32_t> latest;
    for (uint32_t before : found[i]) {
      auto [it, inserted] = latest.emplace(lane(before), before);
      if (!inserted) it->second = std::max(it->second, before);
    }
    for (const auto& [key, before] : latest) {
      if (key != lane(i)) plan.data[i].push_back(before);
    }
  }
  return plan;
}

}  // namespace apptracer::whatif
