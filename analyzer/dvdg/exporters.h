// Exports of a graph view: Graphviz DOT for people (Fig. 6.1 layout), and
// GraphML, JSON and protobuf (proto/dvdg.proto) for programs.
#pragma once

#include <ostream>
#include <string>

#include "analyzer/dvdg/graph.h"
#include "analyzer/dvdg/graph_view.h"

namespace apptracer::dvdg {

// What an op is called in a view: its name, plus "x N" when iterations were
// collapsed into it.
std::string view_op_name(const Graph& graph, const GraphView& view, uint32_t op);

void write_dot(const Graph& graph, const GraphView& view, std::ostream& out);
void write_graphml(const Graph& graph, const GraphView& view, std::ostream& out);
void write_json(const Graph& graph, const GraphView& view, std::ostream& out);
void write_proto(const Graph& graph, const GraphView& view, std::ostream& out);

// Renders DOT text to an SVG file through Graphviz's `dot`. Throws
// std::runtime_error with one line when `dot` is missing or fails.
void render_svg(const std::string& dot_text, const std::string& svg_path);

}  // namespace apptracer::dvdg
