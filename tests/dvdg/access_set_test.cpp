// Access sets (docs/dvdg.md): a kernel whose possible reads and writes reach
// many values holds them once, so a training trace's graph stays a small
// multiple of its operations, and says the same dependences.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <sstream>

#include "analyzer/dvdg/exporters.h"
#include "analyzer/dvdg/graph_store.h"
#include "analyzer/dvdg/queries.h"
#include "command_runner.h"
#include "dvdg_fixture.h"

namespace apptracer::dvdg {
namespace {

constexpr int64_t kBytes = 4096;

class AccessSetTest : public DvdgTest {
 public:
  // `count` device tensors, each copied in from a host buffer of its own.
  std::vector<int64_t> tensors(const std::string& prefix, int count, int64_t base) {
    std::vector<int64_t> ids;
    for (int i = 0; i < count; ++i) {
      std::string name = prefix + std::to_string(i);
      int64_t tensor = buffer(name, AllocKind::Device, base + i * kBytes, kBytes);
      copy(CopyKind::HtoD, buffer(name + "_h", AllocKind::PageableHost, (base >> 20) + i * kBytes, kBytes),
           tensor, kBytes, 10 + i);
      ids.push_back(tensor);
    }
    return ids;
  }

  // A foreach optimizer kernel: each tensor assumed read and written.
  void foreach_step(const std::vector<int64_t>& parameters, int64_t api_ns) {
    std::vector<Arg> args;
    for (int64_t parameter : parameters) args.push_back({parameter, AccessKind::ReadWrite, AccessSource::Assumed});
    kernel("multi_tensor_apply_kernel", args, api_ns);
  }
};

// A training loop: each step ordinary kernels (a real step has hundreds)
// and one foreach kernel over every parameter. Its dependences grow with
// the square of the parameters; the edges the graph holds stay a few per
// operation.
TEST_F(AccessSetTest, AForeachStepsEdgesPerOperationAreBounded) {
  constexpr int kParameters = 64;
  constexpr int kSteps = 20;
  std::vector<int64_t> parameters = tensors("p", kParameters, 0x7f0000000000);
  int64_t activation = buffer("act", AllocKind::Device, 0x7f1000000000, kBytes);
  int64_t ns = 1000;
  for (int step = 0; step < kSteps; ++step) {
    for (int i = 0; i < 30; ++i) {
      kernel("gemm", {{parameters[i], AccessKind::Read, AccessSource::ConstSignature},
                      {activation, AccessKind::ReadWrite, AccessSource::Assumed}},
             ns += 10);
    }
    foreach_step(parameters, ns += 10);
  }
  Graph graph = build();
  size_t sets = std::count_if(graph.ops.begin(), graph.ops.end(), [](const Op& op) { return op.access_set; });
  EXPECT_EQ(sets, size_t{kSteps});
  EXPECT_EQ(graph.access_set_count(), size_t{kSteps});
  // Every step's foreach kernel read and wrote every parameter.
  EXPECT_GE(graph.dependence_count(), size_t{kSteps} * kParameters * kParameters);
  double per_op = static_cast<double>(graph.edge_count()) / static_cast<double>(graph.ops.size());
  EXPECT_LE(per_op, 10.0) << graph.edge_count() << " edges for " << graph.ops.size() << " operations";
  size_t held = 0;
  graph.for_each_held_edge([&](const Edge&) { ++held; });
  EXPECT_EQ(held, graph.edge_count());
}

// The set stands for exactly the pairs: every value it wrote depends on
// every value it read, through the set; a certain read (here of memory
// nothing wrote, which is also a bug report) keeps an edge to each value
// written.
TEST_F(AccessSetTest, ASetHoldsThePossibleReadsAndCertainReadsKeepTheirEdges) {
  constexpr int kTensors = 20;
  std::vector<int64_t> parameters = tensors("p", kTensors, 0x7f0000000000);
  int64_t garbage = buffer("garbage", AllocKind::Device, 0x7f2000000000, kBytes);
  std::vector<Arg> args{{garbage, AccessKind::Read, AccessSource::ConstSignature}};
  for (int64_t parameter : parameters) args.push_back({parameter, AccessKind::ReadWrite, AccessSource::Assumed});
  kernel("multi_tensor_apply_kernel", args, 1000);
  Graph graph = build();
  uint32_t op = static_cast<uint32_t>(graph.ops.size() - 1);
  ASSERT_TRUE(graph.ops[op].access_set);
  EXPECT_TRUE(graph.ops[op].reads_uninitialized);
  std::vector<std::string> into_set, out_of_set, pairs;
  graph.for_each_held_edge(op, [&](const Edge& edge) {
    if (edge.dst_value == kAccessSet) into_set.push_back(value_name(graph, edge.src_value));
    else if (edge.src_value == kAccessSet) out_of_set.push_back(value_name(graph, edge.dst_value));
    else pairs.push_back(edge_text(graph, edge));
  });
  EXPECT_EQ(into_set.size(), size_t{kTensors});
  EXPECT_EQ(into_set.front(), "p0:1");
  EXPECT_EQ(out_of_set.size(), size_t{kTensors});
  EXPECT_EQ(out_of_set.back(), "p19:2");
  ASSERT_EQ(pairs.size(), size_t{kTensors});
  EXPECT_EQ(pairs.front(), "garbage:0 -> p0:2 [multi_tensor_apply_kernel] (uninitialized)");
  // The dependences are still every pair.
  EXPECT_EQ(edges_of(graph, op).size(), size_t{(kTensors + 1) * kTensors});
  EXPECT_EQ(graph.dependence_count() - graph.edge_count(),
            size_t{kTensors * kTensors - 2 * kTensors});
}

// A kernel of a handful of values keeps its pairs, as a GEMM's or an
// elementwise kernel's: 16 of them, but only 8 values.
TEST_F(AccessSetTest, AKernelOfFewValuesHasNoSet) {
  std::vector<int64_t> parameters = tensors("p", 4, 0x7f0000000000);
  foreach_step(parameters, 1000);
  foreach_step(parameters, 2000);
  Graph graph = build();
  EXPECT_EQ(graph.access_set_count(), 0u);
  EXPECT_EQ(graph.edge_count(), graph.dependence_count());
}

// Queries answer from the dependences: a value read only through a set is
// still a possible producer of what the kernel wrote, and the kernel its consumer.
TEST_F(AccessSetTest, QueriesSeeThroughTheSet) {
  std::vector<int64_t> parameters = tensors("p", 20, 0x7f0000000000);
  foreach_step(parameters, 1000);
  Graph graph = build();
  uint32_t op = static_cast<uint32_t>(graph.ops.size() - 1);
  ASSERT_TRUE(graph.ops[op].access_set);
  uint32_t read = graph.op_reads[graph.op_reads_begin[op] + 7];
  uint32_t written = graph.op_writes[graph.op_writes_begin[op] + 3];
  std::ostringstream why, consumers;
  print_why(graph, written, why);
  print_consumers(graph, read, consumers);
  EXPECT_NE(why.str().find("    reads " + value_label(graph, read, ", ") + "\n"), std::string::npos)
      << why.str();
  EXPECT_NE(consumers.str().find("    writes " + value_label(graph, written, ", ") + "\n"),
            std::string::npos)
      << consumers.str();
}

// Exports draw the set as a node and have as many edges as the graph holds;
// the stored graph marks what the set holds and its view still lists every
// dependence.
TEST_F(AccessSetTest, ExportsAndTablesHoldTheSetOnce) {
  std::vector<int64_t> parameters = tensors("p", 20, 0x7f0000000000);
  foreach_step(parameters, 1000);
  foreach_step(parameters, 2000);
  Graph graph = build();
  ASSERT_EQ(graph.access_set_count(), 2u);
  ViewFilter filter;
  filter.access_sets = true;
  GraphView view = make_view(graph, filter);
  EXPECT_EQ(view.edges.size(), graph.edge_count());
  ASSERT_EQ(view.access_sets.size(), 2u);

  std::ostringstream dot;
  write_dot(graph, view, dot);
  std::string set = access_set_ref(view.access_sets[0]);
  EXPECT_NE(dot.str().find("  " + set + " [shape=ellipse, style=dashed, label=\"" + set +
                           ": access set of op " + set.substr(1) + "\\n20 possible reads, 20 writes\"];"),
            std::string::npos)
      << dot.str();
  std::ostringstream json_text;
  write_json(graph, view, json_text);
  nlohmann::json json = nlohmann::json::parse(json_text.str());
  ASSERT_EQ(json["access_sets"].size(), 2u);
  size_t into = 0, out_of = 0;
  for (const auto& edge : json["edges"]) {
    into += edge["dst"].is_null() && edge["dst_access_set"] == edge["op"];
    out_of += edge["src"].is_null() && edge["src_access_set"] == edge["op"];
  }
  EXPECT_EQ(into, 40u);
  EXPECT_EQ(out_of, 40u);

  GraphView expanded = make_view(graph, ViewFilter{});
  EXPECT_EQ(expanded.edges.size(), graph.dependence_count());
  EXPECT_TRUE(expanded.access_sets.empty());

  store_graph(trace_->db(), graph);
  Statement counts = trace_->db().prepare(
      "SELECT (SELECT count(*) FROM dvdg_edges), "
      "(SELECT count(*) FROM dvdg_op_values WHERE through_set = 1)");
  ASSERT_TRUE(counts.step());
  EXPECT_EQ(counts.int64(0), static_cast<int64_t>(graph.dependence_count()));
  EXPECT_EQ(counts.int64(1), int64_t{20 + 20 + 20 + 20});
}

}  // namespace
}  // namespace apptracer::dvdg
