#include <string_view>

#include "analyzer/dvdg/exporters.h"
#include "analyzer/dvdg/labels.h"
#include "apptracer/text_escape.h"

namespace apptracer::dvdg {

namespace {

// XML 1.0 text is UTF-8 without control characters other than tab, line
// feed and carriage return (not even as references): the others, and bytes
// that are not UTF-8, become U+FFFD.
std::string xml_escaped(std::string_view text) {
  std::string out;
  for (char c : valid_utf8(text)) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\n': out += "&#10;"; break;
      case '\t': out += "&#9;"; break;
      case '\r': out += "&#13;"; break;
      default: out += static_cast<unsigned char>(c) < 0x20 ? std::string("\xef\xbf\xbd") : std::string(1, c);
    }
  }
  return out;
}

template <typename T>
void data(std::ostream& out, const char* key, const T& value) {
  out << "      <data key=\"" << key << "\">" << value << "</data>\n";
}

void text_data(std::ostream& out, const char* key, std::string_view value) {
  out << "      <data key=\"" << key << "\">" << xml_escaped(value) << "</data>\n";
}

const char* boolean(bool value) { return value ? "true" : "false"; }

}  // namespace

// Plain GraphML attributes (no yEd extensions) so networkx, Gephi and yEd all
// read it; `label` is the attribute those tools show.
void write_graphml(const Graph& graph, const GraphView& view, std::ostream& out) {
  out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
         "<graphml xmlns=\"http://graphml.graphdrawing.org/xmlns\" "
         "xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\" "
         "xsi:schemaLocation=\"http://graphml.graphdrawing.org/xmlns "
         "http://graphml.graphdrawing.org/xmlns/1.0/graphml.xsd\">\n";
  struct Key {
    const char* id;
    const char* target;
    const char* name;
    const char* type;
  };
  static const Key kKeys[] = {
      {"v_label", "node", "label", "string"},
      {"v_alloc", "node", "alloc_id", "long"},
      {"v_sub", "node", "sub_allocation_id", "long"},
      {"v_offset", "node", "region_offset", "long"},
      {"v_address", "node", "address", "string"},
      {"v_bytes", "node", "bytes", "long"},
      {"v_device", "node", "device", "long"},
      {"v_memory", "node", "memory", "string"},
      {"v_version", "node", "version", "long"},
      {"v_uninit", "node", "read_uninitialized", "boolean"},
      {"v_freed", "node", "freed", "boolean"},
      {"v_location", "node", "location", "string"},
      {"v_access_set", "node", "access_set_op_id", "long"},
      {"e_label", "edge", "label", "string"},
      {"e_op", "edge", "op_id", "long"},
      {"e_op_kind", "edge", "op_kind", "string"},
      {"e_kind", "edge", "kind", "string"},
      {"e_bytes", "edge", "bytes", "long"},
      {"e_start", "edge", "start_ns", "long"},
      {"e_end", "edge", "end_ns", "long"},
      {"e_stream", "edge", "stream", "long"},
      {"e_repeats", "edge", "repeats", "long"},
      {"e_uninit", "edge", "uninitialized_read", "boolean"},
      {"e_cause", "edge", "migration_cause", "string"},
  };
  for (const Key& key : kKeys) {
    // Declared where used: a graph without access sets reads as before they were.
    if (view.access_sets.empty() && std::string_view(key.id) == "v_access_set") continue;
    out << "  <key id=\"" << key.id << "\" for=\"" << key.target << "\" attr.name=\"" << key.name
        << "\" attr.type=\"" << key.type << "\"/>\n";
  }
  out << "  <graph id=\"dvdg\" edgedefault=\"directed\">\n";
  for (uint32_t value : view.values) {
    const Value& record = graph.values[value];
    const Location& where = graph.locations[record.location];
    out << "    <node id=\"" << value_ref(value) << "\">\n";
    text_data(out, "v_label", value_label(graph, value, "\n"));
    if (where.alloc_id) data(out, "v_alloc", *where.alloc_id);
    if (where.sub_allocation_id) data(out, "v_sub", *where.sub_allocation_id);
    data(out, "v_offset", record.offset);
    data(out, "v_address", hex_address(where.address + record.offset));
    data(out, "v_bytes", record.bytes);
    if (where.device) data(out, "v_device", *where.device);
    text_data(out, "v_memory", to_string(where.memory));
    data(out, "v_version", record.version);
    data(out, "v_uninit", boolean(record.read_uninitialized));
    data(out, "v_freed", boolean(record.freed));
    if (int16_t residency = graph.residency(value); residency != kNoResidency)
      text_data(out, "v_location", residency_name(residency));
    out << "    </node>\n";
  }
  // An access set is a node of its own, with its op's id (graph.h).
  for (uint32_t op : view.access_sets) {
    out << "    <node id=\"" << access_set_ref(op) << "\">\n";
    text_data(out, "v_label", access_set_label(graph, op, "\n"));
    data(out, "v_access_set", int64_t{op} + 1);
    out << "    </node>\n";
  }
  for (size_t i = 0; i < view.edges.size(); ++i) {
    const ViewEdge& shown = view.edges[i];
    const Edge& edge = shown.edge;
    const Op& op = graph.ops[edge.op];
    out << "    <edge id=\"e" << i << "\" source=\"" << end_ref(shown.src_value, edge.op)
        << "\" target=\"" << end_ref(shown.dst_value, edge.op) << "\">\n";
    text_data(out, "e_label", view_op_name(graph, view, edge.op));
    data(out, "e_op", int64_t{edge.op} + 1);
    text_data(out, "e_op_kind", to_string(op.kind));
    text_data(out, "e_kind", to_string(edge.kind));
    if (edge.bytes >= 0) data(out, "e_bytes", edge.bytes);
    data(out, "e_start", op.start_ns);
    data(out, "e_end", op.end_ns);
    if (op.stream) data(out, "e_stream", *op.stream);
    data(out, "e_repeats", view.repeats[edge.op]);
    data(out, "e_uninit", boolean(edge.uninitialized_read));
    if (edge.kind == EdgeKind::Migration)
      text_data(out, "e_cause", to_string(static_cast<UmMigrationCause>(op.migration_cause)));
    out << "    </edge>\n";
  }
  out << "  </graph>\n</graphml>\n";
}

}  // namespace apptracer::dvdg
