// Unified memory in the DVDG: migrations are ops of their own, placed right
// before the kernel or host phase that caused them (or, for prefetches, where
// the prefetch was issued), with a `migration` edge from the value where it
// was to the same version where it went. Expectations are the scenario of
// tests/support/um_scenario.h, worked out by hand.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "dvdg.pb.h"
#include "dvdg_fixture.h"
#include "analyzer/dvdg/exporters.h"
#include "analyzer/dvdg/graph_store.h"
#include "analyzer/dvdg/queries.h"
#include "um_scenario.h"

namespace apptracer::dvdg {
namespace {

using Edges = std::vector<std::string>;
using testing::kMiB;

class UnifiedMemory : public DvdgTest {
 public:
  void SetUp() override {
    DvdgTest::SetUp();
    ids_ = testing::add_um_scenario(*trace_);
    names_[ids_.m] = "m";
    names_[ids_.q] = "q";
    names_[ids_.out] = "out";
    names_[ids_.out2] = "out2";
  }

  // The ops that are not allocations, by name, in program order.
  std::vector<std::string> op_names(const Graph& graph) const {
    std::vector<std::string> names;
    for (uint32_t op = 0; op < graph.ops.size(); ++op) {
      OpKind kind = graph.ops[op].kind;
      if (kind != OpKind::Allocation && kind != OpKind::Free) names.push_back(op_name(graph, op));
    }
    return names;
  }

  uint32_t op_of(const Graph& graph, OpKind kind, int64_t source_id) const {
    for (uint32_t op = 0; op < graph.ops.size(); ++op) {
      if (graph.ops[op].kind == kind && graph.ops[op].source_id == source_id) return op;
    }
    ADD_FAILURE() << "no " << to_string(kind) << " op for row " << source_id;
    return 0;
  }

  testing::UmScenario ids_{};
};

TEST_F(UnifiedMemory, MigrationsAreEdgesBetweenResidenciesOfTheSameVersion) {
  Graph graph = build();
  // The host wrote m (invisible), sum read it on device 0 twice, the host read
  // it back; q was prefetched, then scaled in place. The 4 KiB of the
  // `__managed__` variable belong to no allocation: not in the graph.
  EXPECT_EQ(edges(graph), (Edges{
                              "m:0@host -> m:0@device 0 [migration host -> device 0] (migration)",
                              "m:0@device 0 -> out:1 [sum]",
                              "m:0@device 0 -> out2:1 [sum]",
                              "m:0@device 0 -> m:0@host [migration device 0 -> host] (migration)",
                              "q:0@host -> q:0@device 0 [prefetch host -> device 0] (migration)",
                              "q:0@device 0 -> q:1@device 0 [scale]",
                          }));
  // Each migration right before what caused it; the idle prefetch is no op.
  EXPECT_EQ(op_names(graph), (std::vector<std::string>{
                                 "migration host -> device 0", "sum", "sum",
                                 "migration device 0 -> host", "host phase",
                                 "prefetch host -> device 0", "scale"}));
}

TEST_F(UnifiedMemory, MigrationOpsSumTheirRecordsAndPointAtTheirCause) {
  Graph graph = build();
  uint32_t sum1 = op_of(graph, OpKind::Kernel, ids_.sum1);
  const Op& in = graph.ops[sum1 - 1];
  EXPECT_EQ(in.kind, OpKind::Migration);
  EXPECT_EQ(in.source_id, ids_.sum1);
  EXPECT_EQ(in.caused_by, sum1);
  EXPECT_EQ(in.bytes, 64 * kMiB);  // two records of 32 MiB
  EXPECT_EQ(in.from, kHostResidency);
  EXPECT_EQ(in.to, 0);
  EXPECT_EQ(in.migration_cause, static_cast<uint8_t>(UmMigrationCause::Coherence));
  EXPECT_EQ(in.start_ns, 330);
  EXPECT_EQ(in.end_ns, 900);

  uint32_t phase = op_of(graph, OpKind::HostPhase, ids_.dtoh);
  EXPECT_EQ(graph.ops[phase].start_ns, 1805);
  EXPECT_EQ(graph.ops[phase].end_ns, 2000);
  const Op& out = graph.ops[phase - 1];
  EXPECT_EQ(out.kind, OpKind::Migration);
  EXPECT_EQ(out.source_id, ids_.dtoh);
  EXPECT_EQ(out.caused_by, phase);
  EXPECT_EQ(out.bytes, 64 * kMiB);
  EXPECT_EQ(out.migration_cause, static_cast<uint8_t>(UmMigrationCause::Coherence));

  // Prefetch and kernel ids may coincide: the prefetch is the migration nothing caused.
  uint32_t prefetch = op_of(graph, OpKind::Kernel, ids_.scale) - 1;
  EXPECT_EQ(graph.ops[prefetch].kind, OpKind::Migration);
  EXPECT_EQ(graph.ops[prefetch].source_id, ids_.prefetch);
  EXPECT_EQ(graph.ops[prefetch].caused_by, Op::kNoOp);
  EXPECT_EQ(graph.ops[prefetch].stream, 7);
  EXPECT_EQ(graph.ops[prefetch].bytes, 2 * kMiB);
  EXPECT_EQ(graph.ops[prefetch].issue_ns, 2100);
  EXPECT_EQ(graph.ops[prefetch].migration_cause,
            static_cast<uint8_t>(UmMigrationCause::Prefetch));
  for (const Edge& edge : edges_of(graph)) {
    if (edge.kind == EdgeKind::Migration) {
      EXPECT_EQ(edge.bytes, graph.ops[edge.op].bytes);
    }
  }
}

TEST_F(UnifiedMemory, StoredTablesSayWhereManagedValuesResideAndWhatCausedMigrations) {
  store_graph(trace_->db(), build());
  Database& db = trace_->db();
  Statement values = db.prepare(
      "SELECT alloc_id, version, location FROM dvdg_values WHERE alloc_id IN (?, ?) ORDER BY id");
  values.bind(1, ids_.m).bind(2, ids_.out);
  std::vector<std::string> rows;
  while (values.step()) {
    rows.push_back(std::string(values.int64(0) == ids_.m ? "m" : "out") + ":" + values.text(1) +
                   "@" + (values.is_null(2) ? "NULL" : values.text(2)));
  }
  EXPECT_EQ(rows, (std::vector<std::string>{"m:0@-1", "out:0@NULL", "m:0@0", "out:1@NULL",
                                            "m:0@-1"}));
  Statement ops = db.prepare(
      "SELECT m.source_id, m.bytes, m.from_location, m.to_location, m.migration_cause, c.kind, "
      "c.source_id FROM dvdg_ops m LEFT JOIN dvdg_ops c ON c.id = m.cause_op_id "
      "WHERE m.kind = 'migration' ORDER BY m.id");
  rows.clear();
  while (ops.step()) {
    std::string row;
    for (int c = 0; c < 7; ++c) row += (c ? "|" : "") + (ops.is_null(c) ? "NULL" : ops.text(c));
    rows.push_back(row);
  }
  EXPECT_EQ(rows, (std::vector<std::string>{
                      std::to_string(ids_.sum1) + "|67108864|-1|0|coherence|kernel|" +
                          std::to_string(ids_.sum1),
                      std::to_string(ids_.dtoh) + "|67108864|0|-1|coherence|host phase|" +
                          std::to_string(ids_.dtoh),
                      std::to_string(ids_.prefetch) + "|2097152|-1|0|prefetch|NULL|NULL",
                  }));
  Statement kinds =
      db.prepare("SELECT count(*), sum(bytes) FROM dvdg_edges WHERE kind = 'migration'");
  ASSERT_TRUE(kinds.step());
  EXPECT_EQ(kinds.int64(0), 3);
  EXPECT_EQ(kinds.int64(1), 130 * kMiB);
}

TEST_F(UnifiedMemory, ExportsDrawMigrationsDashedWithBytesAndCause) {
  Graph graph = build();
  GraphView view = make_view(graph, ViewFilter{});
  std::ostringstream dot;
  write_dot(graph, view, dot);
  EXPECT_NE(dot.str().find("[label=\"migration host -> device 0\\n64 MiB, coherence\", "
                           "style=dashed, color=blue, fontcolor=blue]"),
            std::string::npos)
      << dot.str();
  EXPECT_NE(dot.str().find("version 0 on device 0"), std::string::npos);

  std::ostringstream graphml;
  write_graphml(graph, view, graphml);
  EXPECT_NE(graphml.str().find("<data key=\"e_cause\">coherence</data>"), std::string::npos);
  EXPECT_NE(graphml.str().find("<data key=\"v_location\">device 0</data>"), std::string::npos);

  std::ostringstream json;
  write_json(graph, view, json);
  nlohmann::json document = nlohmann::json::parse(json.str());
  size_t migrations = 0;
  for (const auto& edge : document["edges"]) migrations += edge["kind"] == "migration";
  EXPECT_EQ(migrations, 3u);
  for (const auto& op : document["ops"]) {
    if (op["name"] != "migration host -> device 0") continue;
    EXPECT_EQ(op["kind"], "migration");
    EXPECT_EQ(op["from_location"], -1);
    EXPECT_EQ(op["to_location"], 0);
    EXPECT_EQ(op["migration_cause"], "coherence");
    EXPECT_EQ(op["cause_op"], op["id"].get<int64_t>() + 1);
  }

  std::ostringstream bytes;
  write_proto(graph, view, bytes);
  proto::Graph message;
  ASSERT_TRUE(message.ParseFromString(bytes.str()));
  size_t proto_migrations = 0;
  for (const proto::Edge& edge : message.edges())
    proto_migrations += edge.kind() == proto::Edge::MIGRATION;
  EXPECT_EQ(proto_migrations, 3u);
  for (const proto::Op& op : message.ops()) {
    if (op.kind() != proto::Op::MIGRATION || op.has_cause_op_id()) continue;
    EXPECT_EQ(op.name(), "prefetch host -> device 0");
    EXPECT_EQ(op.to_location(), 0);
    EXPECT_EQ(op.migration_cause(), "prefetch");
  }
  for (const proto::Value& value : message.values()) {
    EXPECT_EQ(value.has_location(), value.alloc_id() == ids_.m || value.alloc_id() == ids_.q);
  }
}

TEST_F(UnifiedMemory, WhySaysTheHostCopyOfMWasMovedThere) {
  Graph graph = build();
  std::ostringstream why;
  print_why(graph, resolve_value(graph, "0x7e0000000000"), why);
  EXPECT_NE(why.str().find("produced by 2 operation(s)"), std::string::npos) << why.str();
  EXPECT_NE(why.str().find("migration device 0 -> host"), std::string::npos);
  EXPECT_NE(why.str().find("moves v"), std::string::npos);
}

// A memset of managed memory migrates it where the memset runs (CUPTI's
// cause "user"); a kernel needing room on its GPU evicts it back to the host.
TEST_F(DvdgTest, MigrationsDuringAMemsetAndAnEvictionGoBeforeThem) {
  int64_t r = buffer("r", AllocKind::Managed, 0x7e0000000000, kMiB);
  int64_t o = buffer("o", AllocKind::Device, 0x7f0000000000, 4096);
  testing::MemsetRow fill;
  fill.alloc_id = r;
  fill.alloc_offset = 0;
  fill.bytes = kMiB;
  fill.memory = MemoryKind::Managed;
  fill.stream = 7;
  fill.api_start_ns = 50;
  fill.gpu_start_ns = 100;
  fill.gpu_end_ns = 200;
  trace_->add(fill);
  testing::UmEventRow in;
  in.address = 0x7e0000000000;
  in.alloc_id = r;
  in.bytes = in.value = kMiB;
  in.dst_device = 0;
  in.start_ns = 120;
  in.end_ns = 150;
  in.cause = static_cast<int64_t>(UmMigrationCause::User);
  trace_->add(in);
  kernel("fill_o", {{o, AccessKind::Write, AccessSource::Sanitizer}}, 250, 7, 300);
  testing::UmEventRow out = in;
  out.src_device = 0;
  out.dst_device.reset();
  out.counter_kind = UmCounterKind::BytesDtoH;
  out.start_ns = 302;
  out.end_ns = 304;
  out.cause = static_cast<int64_t>(UmMigrationCause::Eviction);
  trace_->add(out);
  Graph graph = build();
  EXPECT_EQ(edges(graph), (Edges{
                              "r:0@host -> r:0@device 0 [migration host -> device 0] (migration)",
                              "r:1@device 0 -> r:1@host [migration device 0 -> host] (migration)",
                          }));
  std::vector<std::string> names;
  for (uint32_t op = 0; op < graph.ops.size(); ++op) {
    if (graph.ops[op].kind != OpKind::Allocation) names.push_back(op_name(graph, op));
  }
  EXPECT_EQ(names, (std::vector<std::string>{"migration host -> device 0", "memset",
                                             "migration device 0 -> host", "fill_o"}));
  EXPECT_EQ(to_string(static_cast<UmMigrationCause>(graph.ops[4].migration_cause)), "eviction");
}

// Schema version 1 traces have um_events and mem_advice without the columns
// migrations need: the graph is built as before, with no migration ops.
TEST_F(UnifiedMemory, AVersionOneTraceHasNoMigrationsAndStillBuilds) {
  Database& db = trace_->db();
  db.exec(
      "ALTER TABLE um_events DROP COLUMN cause; ALTER TABLE um_events DROP COLUMN alloc_offset; "
      "ALTER TABLE mem_advice DROP COLUMN stream; UPDATE meta SET value = '1' "
      "WHERE key = 'schema_version'");
  Graph graph = build();
  EXPECT_EQ(edges(graph), (Edges{
                              "m:0@host -> out:1 [sum]",
                              "m:0@host -> out2:1 [sum]",
                              "q:0@host -> q:1@device 0 [scale]",
                          }));
}

}  // namespace
}  // namespace apptracer::dvdg
