#include "analyzer/diff/dvdg_profile.h"

#include "apptracer/saturating.h"
#include "analyzer/dvdg/graph_builder.h"
#include "analyzer/dvdg/labels.h"

namespace apptracer::diff {

namespace {

enum DvdgMeasure { kValues, kEdges, kEdgeBytes };

// Kernels and copies keyed as operations_profile keys them; other ops by
// what the graph calls them ("memset", "migration host -> device 0").
ProfileKey op_key(trace::Trace& trace, const dvdg::Graph& graph, uint32_t op,
                  const DeviceLabels& devices) {
  const dvdg::Op& operation = graph.ops[op];
  if (operation.kind == dvdg::OpKind::Kernel) {
    return {"kernel", std::string(trace.string(operation.name_id, "?")), ""};
  }
  if (operation.kind == dvdg::OpKind::Copy) {
    if (const trace::Transfer* copy = trace.operations().copy(operation.source_id)) {
      return {"copy path", copy_path_name(*copy, devices), copy_route(*copy, devices)};
    }
  }
  return {std::string(trace::to_string(operation.kind)), dvdg::op_name(graph, op), ""};
}

}  // namespace

Profile dvdg_profile(trace::Trace& trace, const DeviceLabels& devices) {
  dvdg::Graph graph = dvdg::build_graph_from_trace(trace);
  Profile profile;
  profile.measures = {"values", "edges", "edge_bytes"};
  for (uint32_t op = 0; op < graph.ops.size(); ++op) {
    if (trace::is_lifetime_op(graph.ops[op].kind)) continue;
    std::vector<int64_t>& entry = profile.entry(op_key(trace, graph, op, devices));
    entry[kValues] = saturating_add(entry[kValues], graph.op_writes_begin[op + 1] - graph.op_writes_begin[op]);
    graph.for_each_edge(op, [&](const dvdg::Edge& edge) {
      entry[kEdges] = saturating_add(entry[kEdges], 1);
      if (edge.bytes > 0) entry[kEdgeBytes] = saturating_add(entry[kEdgeBytes], edge.bytes);
    });
  }
  return profile;
}

}  // namespace apptracer::diff
