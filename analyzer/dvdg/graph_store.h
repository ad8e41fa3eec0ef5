// The graph as tables of the trace itself (dvdg_ops, dvdg_values,
// dvdg_op_values, dvdg_listed_edges, and the dvdg_edges view of every edge),
// so any SQL client reads trace and graph together.
#pragma once

#include <string>

#include "apptracer/sqlite.h"
#include "graph.h"

namespace apptracer::dvdg {

// The SQL that creates the dvdg_* tables and view (the graph's part of the
// contract), as tables.def declares them.
std::string dvdg_tables_sql();

// Replaces the dvdg_* tables of `db` with `graph` in one transaction;
// nothing else in the database changes.
void store_graph(Database& db, const Graph& graph);

}  // namespace apptracer::dvdg
