#include "analyzer/timeline/dvdg_flows.h"

#include <algorithm>
#include <optional>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "analyzer/dvdg/graph_builder.h"
#include "analyzer/dvdg/graph_store.h"

namespace apptracer {

namespace {

std::optional<GpuOp> gpu_op(std::string_view kind) {
  if (kind == trace::to_string(trace::OpKind::Kernel)) return GpuOp::Kernel;
  if (kind == trace::to_string(trace::OpKind::Copy)) return GpuOp::Copy;
  if (kind == trace::to_string(trace::OpKind::Memset)) return GpuOp::Memset;
  return std::nullopt;
}

// A graph's ops and values, as much as flows need: by id (as stored: a
// position in the graph + 1), what kind of GPU work an op is (if any) and
// its row, and the op that wrote each value; a migration's value holds what
// the value it moved held.
class FlowGraph {
 public:
  // The graph stored in the trace's dvdg_* tables.
  explicit FlowGraph(trace::Trace& trace) {
    trace.stream<DvdgOpRow>("", [&](const trace::Packed<DvdgOpRow>& op) {
      if (op.id < 0) return;
      if (static_cast<size_t>(op.id) >= ops_.size()) ops_.resize(op.id + 1);
      ops_[op.id] = {gpu_op(trace.text(op.kind)), op.source_id};
    });
    trace.stream<DvdgValueRow>("", [&](const trace::Packed<DvdgValueRow>& value) {
      if (value.id < 0) return;
      if (static_cast<size_t>(value.id) >= producer_.size()) producer_.resize(value.id + 1, 0);
      producer_[value.id] = static_cast<uint32_t>(value.producer_op_id.value_or(0));
    });
  }

  // A graph built in memory.
  explicit FlowGraph(const dvdg::Graph& graph)
      : ops_(graph.ops.size() + 1), producer_(graph.values.size() + 1, 0) {
    for (size_t op = 0; op < graph.ops.size(); ++op)
      ops_[op + 1] = {gpu_op(trace::to_string(graph.ops[op].kind)), graph.ops[op].source_id};
    for (size_t value = 0; value < graph.values.size(); ++value) {
      uint32_t producer = graph.values[value].producer_op;
      if (producer != dvdg::Value::kNoOp) producer_[value + 1] = producer + 1;
    }
  }

  void moved(int64_t to, int64_t from) { moved_from_[to] = from; }

  // The GPU work that wrote what `value` holds, if GPU work did.
  std::optional<std::pair<GpuOp, int64_t>> origin(int64_t value) const {
    for (auto from = moved_from_.find(value); from != moved_from_.end(); from = moved_from_.find(value))
      value = from->second;
    if (value < 0 || static_cast<size_t>(value) >= producer_.size()) return std::nullopt;
    return work(producer_[value]);
  }

  std::optional<std::pair<GpuOp, int64_t>> work(int64_t op) const {
    if (op <= 0 || static_cast<size_t>(op) >= ops_.size() || !ops_[op].kind) return std::nullopt;
    return std::make_pair(*ops_[op].kind, ops_[op].source_id);
  }

 private:
  struct StoredOp {
    std::optional<GpuOp> kind;
    int64_t source_id = 0;
  };
  std::vector<StoredOp> ops_;          // by dvdg_ops.id
  std::vector<uint32_t> producer_;     // by dvdg_values.id: dvdg_ops.id, 0 for none
  std::unordered_map<int64_t, int64_t> moved_from_;  // migrated value -> the value it moved
};

// The flows of `graph`, whose edges (by stored ids) for_each_edge(f) visits.
template <typename ForEachEdge>
std::vector<DvdgFlow> flows_of(FlowGraph& graph, ForEachEdge&& for_each_edge) {
  std::vector<DvdgFlow> flows;
  // Data edges, once every migration is known: carry edges (the unwritten
  // rest of a partially written buffer) move no data through the operation.
  std::vector<std::pair<int64_t, int64_t>> reads;  // (consumer op, value read), each once
  // An op's edges come together; a kernel's once per value it wrote.
  int64_t op = -1;
  std::unordered_set<int64_t> read_by_op;
  for_each_edge([&](const dvdg::StoredEdge& edge) {
    if (edge.kind == dvdg::EdgeKind::Migration) graph.moved(edge.dst_value_id, edge.src_value_id);
    if (edge.kind != dvdg::EdgeKind::Data || !graph.work(edge.op_id)) return;
    if (edge.op_id != op) read_by_op.clear();
    op = edge.op_id;
    if (read_by_op.insert(edge.src_value_id).second) reads.emplace_back(edge.op_id, edge.src_value_id);
  });
  for (const auto& [op, value] : reads) {
    auto from = graph.origin(value);
    auto to = graph.work(op);
    if (from && to) flows.push_back({from->first, from->second, to->first, to->second});
  }
  // Each pair once (sorted, not kept in a set beside the list: big graphs
  // have millions of them).
  auto key = [](const DvdgFlow& flow) {
    return std::tie(flow.from_kind, flow.from_id, flow.to_kind, flow.to_id);
  };
  std::sort(flows.begin(), flows.end(),
            [&](const DvdgFlow& a, const DvdgFlow& b) { return key(a) < key(b); });
  flows.erase(std::unique(flows.begin(), flows.end(),
                          [&](const DvdgFlow& a, const DvdgFlow& b) { return key(a) == key(b); }),
              flows.end());
  return flows;
}

}  // namespace

bool has_stored_dvdg(trace::Trace& trace) { return trace.db().has_table(DvdgOpRow::kTable); }

std::vector<DvdgFlow> read_dvdg_flows(trace::Trace& trace) {
  FlowGraph graph(trace);
  return flows_of(graph, [&](const auto& f) { dvdg::for_each_stored_edge(trace, f); });
}

std::vector<DvdgFlow> build_dvdg_flows(trace::Trace& trace) {
  dvdg::Graph built = dvdg::build_graph_from_trace(trace);
  FlowGraph graph(built);
  return flows_of(graph, [&](const auto& f) {
    built.for_each_edge([&](const dvdg::Edge& edge) {
      f(dvdg::StoredEdge{edge.src_value + int64_t{1}, edge.dst_value + int64_t{1},
                         edge.op + int64_t{1}, edge.kind});
    });
  });
}

}  // namespace apptracer
