// The graph as tables of the trace itself (dvdg_ops, dvdg_values,
// dvdg_op_values, dvdg_listed_edges, and the dvdg_edges view of every edge),
// so any SQL client reads trace and graph together.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "analyzer/trace/trace.h"
#include "apptracer/sqlite.h"
#include "analyzer/dvdg/graph.h"

namespace apptracer::dvdg {

// The SQL that creates the dvdg_* tables and view (the graph's part of the
// contract), as tables.def declares them.
std::string dvdg_tables_sql();

// Replaces the dvdg_* tables of `db` with `graph` in one transaction;
// nothing else in the database changes.
void store_graph(Database& db, const Graph& graph);

// An edge of the graph stored in a trace, by the stored rows' ids.
struct StoredEdge {
  int64_t src_value_id = 0;
  int64_t dst_value_id = 0;
  int64_t op_id = 0;
  EdgeKind kind = EdgeKind::Data;
};

// Calls f(edge) for every edge of the graph stored in `trace` (the rows of
// the dvdg_edges view) without a query over the view: a kernel's data edges
// are made from what it read and wrote. None when the trace holds no graph,
// or one stored before kernels' data edges were, or before access sets were
// (run `apptracer dvdg` again).
void for_each_stored_edge(trace::Trace& trace, const std::function<void(const StoredEdge&)>& f);

}  // namespace apptracer::dvdg
