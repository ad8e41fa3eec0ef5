// Framework allocators carve tensors out of one CUDA allocation (a
// segment): each tensor is a region of its own, so work on one tensor never
// makes another tensor of the same segment depend on it.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <sstream>

#include "command_runner.h"
#include "dvdg_fixture.h"
#include "analyzer/dvdg/queries.h"

namespace apptracer::dvdg {
namespace {

using Edges = std::vector<std::string>;

constexpr int64_t kSegmentAddress = 0x7f0000000000;

class SubAllocations : public DvdgTest {
 public:
  void SetUp() override {
    DvdgTest::SetUp();
    segment_ = buffer("seg", AllocKind::Device, kSegmentAddress, 1 << 20, /*alloc_ns=*/1);
    host_ = buffer("h", AllocKind::PageableHost, 0x100000, 8192, 2);
    out_ = buffer("out", AllocKind::PageableHost, 0x200000, 4000, 3);
  }

  // A linear copy between a host buffer and the segment at `offset`.
  int64_t copy_to_segment(int64_t offset, int64_t bytes, int64_t api_ns) {
    return segment_copy(CopyKind::HtoD, host_, 0, segment_, offset, bytes, api_ns);
  }
  int64_t copy_from_segment(int64_t offset, int64_t bytes, int64_t api_ns) {
    return segment_copy(CopyKind::DtoH, segment_, offset, out_, 0, bytes, api_ns);
  }

  int64_t segment_copy(CopyKind kind, int64_t src, int64_t src_offset, int64_t dst,
                       int64_t dst_offset, int64_t bytes, int64_t api_ns) {
    testing::MemcpyRow row;
    row.kind = kind;
    row.bytes = bytes;
    row.src_alloc_id = src;
    row.dst_alloc_id = dst;
    row.src_offset = src_offset;
    row.dst_offset = dst_offset;
    row.src_memory = kind == CopyKind::HtoD ? MemoryKind::Pageable : MemoryKind::Device;
    row.dst_memory = kind == CopyKind::DtoH ? MemoryKind::Pageable : MemoryKind::Device;
    row.stream = 7;
    row.api_start_ns = api_ns;
    row.gpu_start_ns = api_ns + 5;
    row.gpu_end_ns = api_ns + 10;
    return trace_->add(row);
  }

  // Edges in a fixed order (an op's writes to several regions come in
  // region order, which a test need not know).
  std::vector<std::string> sorted_edges(const Graph& graph) const {
    std::vector<std::string> texts = edges(graph);
    std::sort(texts.begin(), texts.end());
    return texts;
  }

  Edge edge_named(const Graph& graph, const std::string& text) const {
    for (const Edge& edge : edges_of(graph)) {
      if (edge_text(graph, edge) == text) return edge;
    }
    ADD_FAILURE() << "no edge " << text;
    return Edge();
  }

  int64_t segment_ = 0, host_ = 0, out_ = 0;
};

TEST_F(SubAllocations, AKernelReadingOneTensorDoesNotDependOnWritesToAnother) {
  block("a", segment_, 0, 4000, 10);
  block("b", segment_, 4096, 4000, 11);
  block("c", segment_, 8192, 4000, 12);
  copy_to_segment(0, 4000, 100);
  kernel("fill", {{segment_, AccessKind::Write, AccessSource::Sanitizer, 4096}}, 200);
  kernel("fill", {{segment_, AccessKind::Write, AccessSource::Sanitizer, 4096}}, 250);
  kernel("scale",
         {{segment_, AccessKind::Read, AccessSource::ConstSignature, 0},
          {segment_, AccessKind::ReadWrite, AccessSource::Assumed, 8192}},
         300);
  copy_from_segment(8192, 4000, 400);
  Graph graph = build();
  EXPECT_EQ(edges(graph), (Edges{
                              "h:0 -> a:1 [HtoD copy]",
                              "b:1 -> b:2 [fill] (carry)",
                              "a:1 -> c:1 [scale]",
                              "c:1 -> out:1 [DtoH copy]",
                          }));
}

TEST_F(SubAllocations, ANewTensorInAFreedBlockStartsOver) {
  int64_t first = block("t1", segment_, 0, 4000, 10, /*free_ns=*/150);
  block("t2", segment_, 0, 4000, 160);
  copy_to_segment(0, 4000, 100);
  copy_from_segment(0, 4000, 120);
  kernel("init", {{segment_, AccessKind::Write, AccessSource::Sanitizer, 0}}, 200);
  copy_from_segment(0, 4000, 300);
  Graph graph = build();
  EXPECT_EQ(edges(graph), (Edges{
                              "h:0 -> t1:1 [HtoD copy]",
                              "t1:1 -> out:1 [DtoH copy]",
                              "t2:1 -> out:2 [DtoH copy]",
                          }));
  // What t1 held when its block went back to the pool ends with it.
  size_t freed = 0;
  for (const Value& value : graph.values) {
    const Location& where = graph.locations[value.location];
    if (where.sub_allocation_id != first || value.version != 1) continue;
    EXPECT_TRUE(value.freed);
    ++freed;
  }
  EXPECT_EQ(freed, 1u);
}

TEST_F(SubAllocations, AnInteriorPointerReachesToTheEndOfItsTensor) {
  block("t", segment_, 0, 4096, 10);
  block("next", segment_, 4096, 4096, 11);
  copy_to_segment(0, 8192, 100);
  kernel("tail", {{segment_, AccessKind::Write, AccessSource::Sanitizer, 1024}}, 200);
  copy_from_segment(0, 4000, 300);
  Graph graph = build();
  EXPECT_EQ(sorted_edges(graph), (Edges{
                                     "h:0 -> next:1 [HtoD copy]",
                                     "h:0 -> t:1 [HtoD copy]",
                                     "t:1 -> out:1 [DtoH copy]",
                                     "t:1 -> t[1024,4096):2 [tail] (carry)",
                                     "t[1024,4096):2 -> out:1 [DtoH copy]",
                                 }));
  EXPECT_EQ(edge_named(graph, "t:1 -> out:1 [DtoH copy]").bytes, 1024);
  EXPECT_EQ(edge_named(graph, "t[1024,4096):2 -> out:1 [DtoH copy]").bytes, 4000 - 1024);
  EXPECT_EQ(edge_named(graph, "h:0 -> t:1 [HtoD copy]").bytes, 4096);
  EXPECT_EQ(edge_named(graph, "h:0 -> next:1 [HtoD copy]").bytes, 4096);
}

// A copy over two tensors and the padding between them: each byte depends
// on the byte it came from, and the padding is the segment's own memory.
TEST_F(SubAllocations, ACopyAcrossTensorsSplitsByTensor) {
  block("a", segment_, 0, 4000, 10);
  block("b", segment_, 4096, 4000, 11);
  copy_to_segment(0, 8096, 100);
  copy_from_segment(2000, 4000, 200);
  Graph graph = build();
  EXPECT_EQ(sorted_edges(graph), (Edges{
                                     "a:1 -> out:1 [DtoH copy]",
                                     "b:1 -> out:1 [DtoH copy]",
                                     "h:0 -> a:1 [HtoD copy]",
                                     "h:0 -> b:1 [HtoD copy]",
                                     "h:0 -> seg[4000,4096):1 [HtoD copy]",
                                     "seg[4000,4096):1 -> out:1 [DtoH copy]",
                                 }));
  EXPECT_EQ(edge_named(graph, "a:1 -> out:1 [DtoH copy]").bytes, 2000);
  EXPECT_EQ(edge_named(graph, "seg[4000,4096):1 -> out:1 [DtoH copy]").bytes, 96);
  EXPECT_EQ(edge_named(graph, "b:1 -> out:1 [DtoH copy]").bytes, 1904);
}

// Two segments, each with its tensors, the second right after the first:
// each copy splits by its own segment's tensors (the segments are resolved
// apart, on threads of their own), the first's up to its end.
TEST_F(SubAllocations, EachSegmentSplitsByItsOwnTensors) {
  int64_t second = buffer("seg2", AllocKind::Device, kSegmentAddress + (1 << 20), 1 << 20, 4);
  block("a", segment_, 0, 4000, 10);
  block("b", segment_, (1 << 20) - 4096, 4096, 11);
  block("c", second, 0, 4000, 12);
  copy_to_segment((1 << 20) - 8192, 8192, 100);
  segment_copy(CopyKind::HtoD, host_, 0, second, 0, 8000, 110);
  Graph graph = build();
  EXPECT_EQ(sorted_edges(graph), (Edges{
                                     "h:0 -> b:1 [HtoD copy]",
                                     "h:0 -> c:1 [HtoD copy]",
                                     "h:0 -> seg2[4000,8000):1 [HtoD copy]",
                                     "h:0 -> seg[1040384,1044480):1 [HtoD copy]",
                                 }));
}

// Tensors partly overwritten: a later read sees each part's own version.
TEST_F(SubAllocations, PartialOverwritesOfATensorAreSeparateVersions) {
  block("t", segment_, 0, 4000, 10);
  copy_to_segment(0, 4000, 100);
  copy_to_segment(1000, 1000, 200);
  copy_to_segment(1500, 1000, 300);
  copy_from_segment(0, 4000, 400);
  Graph graph = build();
  EXPECT_EQ(edges(graph), (Edges{
                              "h:0 -> t:1 [HtoD copy]",
                              "h:0 -> t[1000,2000):2 [HtoD copy]",
                              "h:0 -> t[1500,2500):3 [HtoD copy]",
                              "t:1 -> out:1 [DtoH copy]",
                              "t[1000,2000):2 -> out:1 [DtoH copy]",
                              "t[1500,2500):3 -> out:1 [DtoH copy]",
                          }));
  EXPECT_EQ(edge_named(graph, "t:1 -> out:1 [DtoH copy]").bytes, 1000 + 1500);
  EXPECT_EQ(edge_named(graph, "t[1000,2000):2 -> out:1 [DtoH copy]").bytes, 500);
  EXPECT_EQ(edge_named(graph, "t[1500,2500):3 -> out:1 [DtoH copy]").bytes, 1000);
}

// A pointer into the segment where no tensor lives (past a tensor's end)
// reaches only to the next tensor.
TEST_F(SubAllocations, APointerBetweenTensorsStopsAtTheNextOne) {
  block("a", segment_, 0, 4096, 10);
  block("b", segment_, 8192, 4096, 11);
  kernel("stray", {{segment_, AccessKind::Write, AccessSource::Sanitizer, 4096}}, 200);
  Graph graph = build();
  ASSERT_EQ(graph.op_writes.size(), 1u);
  EXPECT_EQ(value_name(graph, graph.op_writes[0]), "seg[4096,8192):1");
}

TEST_F(SubAllocations, StoredValuesNameTheirTensorAndByteRange) {
  int64_t t = block("t", segment_, 4096, 4000, 10);
  copy_to_segment(4096 + 1000, 1000, 100);
  CommandOutput run = run_apptracer("dvdg " + path_);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  Statement row = trace_->db().prepare(
      "SELECT alloc_id, sub_allocation_id, address, bytes, region_offset, version FROM dvdg_values "
      "WHERE producer_op_id IN (SELECT id FROM dvdg_ops WHERE kind = 'copy')");
  ASSERT_TRUE(row.step());
  EXPECT_EQ(row.int64(0), segment_);
  EXPECT_EQ(row.int64(1), t);
  EXPECT_EQ(row.int64(2), kSegmentAddress + 4096 + 1000);
  EXPECT_EQ(row.int64(3), 1000);
  EXPECT_EQ(row.int64(4), 1000);
  EXPECT_EQ(row.int64(5), 1);
  // Version 0 comes from the block's allocation, which is its row, not an op.
  Statement first = trace_->db().prepare(
      "SELECT producer_op_id IS NULL, bytes FROM dvdg_values WHERE sub_allocation_id = ? "
      "AND version = 0");
  first.bind(1, t);
  ASSERT_TRUE(first.step());
  EXPECT_EQ(first.int64(0), 1);
  EXPECT_EQ(first.int64(1), 4000);
}

// One node per tensor value in the exports.
TEST_F(SubAllocations, JsonExportHasOneNodePerTensorValue) {
  int64_t a = block("a", segment_, 0, 4000, 10);
  int64_t b = block("b", segment_, 4096, 4000, 11);
  copy_to_segment(0, 4000, 100);
  kernel("copy", {{segment_, AccessKind::Read, AccessSource::ConstSignature, 0},
                  {segment_, AccessKind::Write, AccessSource::Sanitizer, 4096}},
         200);
  CommandOutput run = run_apptracer("dvdg --no-store " + path_ + " --json -");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  nlohmann::json graph = nlohmann::json::parse(run.out);
  std::vector<std::pair<int64_t, int64_t>> tensor_values;
  for (const auto& value : graph["values"]) {
    if (!value["sub_allocation_id"].is_null())
      tensor_values.emplace_back(value["sub_allocation_id"].get<int64_t>(),
                                 value["version"].get<int64_t>());
  }
  std::sort(tensor_values.begin(), tensor_values.end());
  EXPECT_EQ(tensor_values, (std::vector<std::pair<int64_t, int64_t>>{{a, 1}, {b, 1}}));
}

TEST_F(SubAllocations, QueriesNameATensorBySubAllocationId) {
  int64_t t = block("t", segment_, 4096, 4000, 10, /*free_ns=*/900);
  copy_to_segment(4096, 4000, 100);
  kernel("use", {{segment_, AccessKind::Read, AccessSource::ConstSignature, 4096}}, 200);
  std::string ref = "s" + std::to_string(t);
  Graph graph = build();
  EXPECT_EQ(value_name(graph, resolve_value(graph, ref)), "t:1");
  EXPECT_EQ(value_name(graph, resolve_value(graph, "0x7f0000001010")), "t:1")
      << "an address inside the tensor names the tensor, not its segment";

  CommandOutput why = run_apptracer("dvdg --no-store " + path_ + " --why " + ref);
  ASSERT_EQ(why.exit_code, 0) << why.err;
  EXPECT_NE(why.out.find("sub-allocation #" + std::to_string(t) + " (pytorch caching allocator) "
                         "of alloc #" + std::to_string(segment_)),
            std::string::npos)
      << why.out;
  EXPECT_NE(why.out.find("HtoD copy"), std::string::npos) << why.out;

  CommandOutput lifetime = run_apptracer("dvdg --no-store " + path_ + " --lifetime " + ref);
  ASSERT_EQ(lifetime.exit_code, 0) << lifetime.err;
  size_t allocated = lifetime.out.find("allocated"), written = lifetime.out.find("written"),
         read = lifetime.out.find("read        op"), freed = lifetime.out.find("freed       at 900 ns");
  EXPECT_LT(allocated, written) << lifetime.out;
  EXPECT_LT(written, read) << lifetime.out;
  EXPECT_LT(read, freed) << lifetime.out;
  EXPECT_NE(freed, std::string::npos) << lifetime.out;
  EXPECT_NE(lifetime.out.find("kernel use"), std::string::npos) << lifetime.out;

  CommandOutput missing = run_apptracer("dvdg --no-store " + path_ + " --why s999");
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_EQ(missing.err.find("apptracer: no sub-allocation 's999'"), 0u) << missing.err;
}

}  // namespace
}  // namespace apptracer::dvdg
