#include <string_view>

#include "analyzer/dvdg/exporters.h"
#include "analyzer/dvdg/labels.h"

namespace apptracer::dvdg {

namespace {

std::string quoted(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '\n') {
      out += "\\n";  // a line break inside a Graphviz label
      continue;
    }
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + '"';
}

}  // namespace

std::string view_op_name(const Graph& graph, const GraphView& view, uint32_t op) {
  std::string name = op_name(graph, op);
  if (view.repeats[op] > 1) name += " x " + std::to_string(view.repeats[op]);
  return name;
}

// Values are boxes (location, address and size, version); edges carry the
// operation. Reads of uninitialized memory are red, the surviving rest of a
// partial write is dashed, unified-memory migrations are dashed blue with
// their bytes and cause, freed values are grey. An access set is a dashed
// ellipse: the values its kernel may have read go into it, and it into the
// values the kernel wrote.
void write_dot(const Graph& graph, const GraphView& view, std::ostream& out) {
  out << "digraph dvdg {\n"
         "  node [shape=box, fontname=\"Helvetica\", fontsize=10];\n"
         "  edge [fontname=\"Helvetica\", fontsize=9];\n";
  for (uint32_t value : view.values) {
    const Value& record = graph.values[value];
    out << "  " << value_ref(value) << " [label=" << quoted(value_label(graph, value, "\n"));
    if (record.read_uninitialized) out << ", color=red, fontcolor=red";
    if (record.freed) out << ", style=filled, fillcolor=lightgrey";
    out << "];\n";
  }
  for (uint32_t op : view.access_sets) {
    out << "  " << access_set_ref(op) << " [shape=ellipse, style=dashed, label="
        << quoted(access_set_label(graph, op, "\n")) << "];\n";
  }
  for (const ViewEdge& shown : view.edges) {
    const Edge& edge = shown.edge;
    std::string label = view_op_name(graph, view, edge.op);
    if (edge.kind == EdgeKind::Carry) label += " (rest)";
    if (edge.kind == EdgeKind::Migration) label += "\n" + migration_detail(graph, edge);
    out << "  " << end_ref(shown.src_value, edge.op) << " -> " << end_ref(shown.dst_value, edge.op)
        << " [label=" << quoted(label);
    if (edge.kind == EdgeKind::Carry) out << ", style=dashed";
    if (edge.kind == EdgeKind::Migration) out << ", style=dashed, color=blue, fontcolor=blue";
    if (edge.uninitialized_read) out << ", color=red, fontcolor=red";
    out << "];\n";
  }
  out << "}\n";
}

}  // namespace apptracer::dvdg
