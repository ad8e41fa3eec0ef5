// The graph as tables of the trace: what is written, that a re-run replaces
// it, and that nothing else in the trace changes.
#include <gtest/gtest.h>

#include "dvdg_fixture.h"
#include "analyzer/dvdg/graph_store.h"

namespace apptracer::dvdg {
namespace {

// Every row of every table except the dvdg_* ones, as text.
std::string trace_contents(Database& db) {
  std::string contents;
  Statement tables = db.prepare(
      "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'dvdg_%' ORDER BY "
      "name");
  while (tables.step()) {
    std::string table = tables.text(0);
    contents += "[" + table + "]\n";
    Statement rows = db.prepare("SELECT * FROM " + table + " ORDER BY rowid");
    while (rows.step()) {
      for (int c = 0; c < rows.column_count(); ++c) contents += rows.text(c) + "|";
      contents += "\n";
    }
  }
  return contents;
}

std::vector<std::string> stored_edges(Database& db) {
  std::vector<std::string> edges;
  Statement rows = db.prepare(
      "SELECT a.name, s.version, b.name, d.version, o.kind, e.kind FROM dvdg_edges e "
      "JOIN dvdg_values s ON s.id = e.src_value_id JOIN dvdg_values d ON d.id = e.dst_value_id "
      "JOIN dvdg_ops o ON o.id = e.op_id "
      "JOIN buffer_names a ON a.alloc_id = s.alloc_id JOIN buffer_names b ON b.alloc_id = "
      "d.alloc_id "
      "ORDER BY e.op_id, e.dst_value_id, e.src_value_id");
  while (rows.step()) {
    edges.push_back(rows.text(0) + ":" + rows.text(1) + " -> " + rows.text(2) + ":" + rows.text(3) +
                    " [" + rows.text(4) + ", " + rows.text(5) + "]");
  }
  return edges;
}

TEST_F(DvdgTest, StoredTablesHoldTheGraph) {
  add_vector_add(*this);
  Graph graph = build();
  store_graph(trace_->db(), graph);
  Database& db = trace_->db();
  db.exec("CREATE TEMP TABLE buffer_names(alloc_id INTEGER, name TEXT)");
  for (const auto& [id, name] : names_) {
    Statement insert = db.prepare("INSERT INTO buffer_names VALUES (?, ?)");
    insert.bind(1, id).bind(2, name).run();
  }
  EXPECT_EQ(stored_edges(db), (std::vector<std::string>{
                                  "a_h:0 -> a_d:1 [copy, data]",
                                  "b_h:0 -> b_d:1 [copy, data]",
                                  "a_d:1 -> s_d:1 [kernel, data]",
                                  "b_d:1 -> s_d:1 [kernel, data]",
                                  "s_d:1 -> s_h:1 [copy, data]",
                              }));
  Statement counts = db.prepare(
      "SELECT (SELECT count(*) FROM dvdg_ops), (SELECT count(*) FROM dvdg_values), "
      "(SELECT count(*) FROM dvdg_edges)");
  ASSERT_TRUE(counts.step());
  EXPECT_EQ(counts.int64(0), static_cast<int64_t>(graph.ops.size()));
  EXPECT_EQ(counts.int64(1), static_cast<int64_t>(graph.values.size()));
  EXPECT_EQ(counts.int64(2), 5);
  // The kernel's data edges are stored as what it read and wrote, the
  // copies' one per row.
  Statement stored = db.prepare(
      "SELECT (SELECT count(*) FROM dvdg_listed_edges), "
      "(SELECT group_concat(written) FROM dvdg_op_values v JOIN dvdg_ops o ON o.id = v.op_id "
      "WHERE o.kind = 'kernel')");
  ASSERT_TRUE(stored.step());
  EXPECT_EQ(stored.int64(0), 3);
  EXPECT_EQ(stored.text(1), "0,0,1");
  // The kernel's op row points back at its kernels row and name.
  Statement kernel = db.prepare(
      "SELECT s.text FROM dvdg_ops o JOIN kernels k ON k.id = o.source_id "
      "JOIN strings s ON s.id = o.name_id WHERE o.kind = 'kernel'");
  ASSERT_TRUE(kernel.step());
  EXPECT_EQ(kernel.text(0), "vector_add");
}

TEST_F(DvdgTest, RerunReplacesTheTablesAndChangesNothingElse) {
  add_vector_add(*this);
  std::string before = trace_contents(trace_->db());
  store_graph(trace_->db(), build());
  store_graph(trace_->db(), build());
  EXPECT_EQ(trace_contents(trace_->db()), before);
  Statement count = trace_->db().prepare("SELECT count(*) FROM dvdg_edges");
  ASSERT_TRUE(count.step());
  EXPECT_EQ(count.int64(0), 5);
}

TEST_F(DvdgTest, ManyRowsAreStoredAcrossBatches) {
  int64_t h = buffer("h", AllocKind::PageableHost, 0x1000, 64);
  int64_t d = buffer("d", AllocKind::Device, 0x7f0000000000, 64);
  with_transaction(trace_->db(), [&] {
    for (int i = 0; i < 100; ++i) copy(CopyKind::HtoD, h, d, 64, 100 + 10 * i);
  });
  Graph graph = build();
  store_graph(trace_->db(), graph);
  Statement rows = trace_->db().prepare(
      "SELECT count(*), min(v.version), max(v.version) FROM dvdg_edges e "
      "JOIN dvdg_values v ON v.id = e.dst_value_id");
  ASSERT_TRUE(rows.step());
  EXPECT_EQ(rows.int64(0), 100);
  EXPECT_EQ(rows.int64(1), 1);
  EXPECT_EQ(rows.int64(2), 100);
}

// A graph an apptracer stored before access sets (dvdg_op_values without
// through_set) reads as no stored graph, not as a damaged trace: `dvdg`
// stores it again.
TEST_F(DvdgTest, AGraphStoredBeforeAccessSetsReadsAsNone) {
  add_vector_add(*this);
  store_graph(trace_->db(), build());
  trace::Trace stored(trace_->db());
  size_t edges = 0;
  for_each_stored_edge(stored, [&](const StoredEdge&) { ++edges; });
  EXPECT_EQ(edges, 5u);
  trace_->db().exec("DROP VIEW dvdg_edges");
  trace_->db().exec("ALTER TABLE dvdg_op_values DROP COLUMN through_set");
  trace::Trace older(trace_->db());
  edges = 0;
  for_each_stored_edge(older, [&](const StoredEdge&) { ++edges; });
  EXPECT_EQ(edges, 0u);
}

}  // namespace
}  // namespace apptracer::dvdg
