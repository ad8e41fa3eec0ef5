// Filters that make big graphs readable, and the --why / --consumers queries.
#include <gtest/gtest.h>

#include <sstream>

#include "command_runner.h"
#include "dvdg_fixture.h"
#include "analyzer/dvdg/graph_view.h"
#include "analyzer/dvdg/queries.h"

namespace apptracer::dvdg {
namespace {

class Filters : public DvdgTest {
 public:
  std::vector<std::string> shown(const Graph& graph, const ViewFilter& filter) const {
    GraphView view = make_view(graph, filter);
    std::vector<std::string> texts;
    for (const ViewEdge& edge : view.edges) {
      std::string text = value_name(graph, edge.src_value) + " -> " +
                         value_name(graph, edge.dst_value) + " [" +
                         op_name(graph, edge.edge.op);
      uint32_t repeats = view.repeats[edge.edge.op];
      if (repeats > 1) text += " x " + std::to_string(repeats);
      texts.push_back(text + "]");
    }
    return texts;
  }

  // The edges of the trace built so far, its iterations collapsed.
  std::vector<std::string> shown_collapsed() {
    Graph graph = build();
    ViewFilter filter;
    filter.collapse_iterations = true;
    return shown(graph, filter);
  }

  // h -> d, d -> o (accumulate, o zeroed first), o -> r, three times.
  void add_loop(int iterations) {
    int64_t h = buffer("h", AllocKind::PageableHost, 0x1000, 256);
    int64_t r = buffer("r", AllocKind::PageableHost, 0x2000, 256);
    int64_t d = buffer("d", AllocKind::Device, 0x7f0000000000, 256);
    int64_t o = buffer("o", AllocKind::Device, 0x7f0000001000, 256);
    testing::MemsetRow zero;
    zero.alloc_id = o;
    zero.bytes = 256;
    zero.stream = 7;
    zero.api_start_ns = 50;
    trace_->add(zero);
    for (int64_t i = 0; i < iterations; ++i) {
      int64_t t = 100 + 100 * i;
      copy(CopyKind::HtoD, h, d, 256, t);
      kernel("accumulate",
             {{d, AccessKind::Read, AccessSource::ConstSignature},
              {o, AccessKind::ReadWrite, AccessSource::Assumed}},
             t + 20);
      copy(CopyKind::DtoH, o, r, 256, t + 40);
    }
  }
};

using Edges = std::vector<std::string>;

TEST_F(Filters, CollapseFoldsRepeatedIterationsIntoTheFirst) {
  add_loop(3);
  EXPECT_EQ(shown_collapsed(), (Edges{
                                      "h:0 -> d:1 [HtoD copy x 3]",
                                      "d:1 -> o:2 [accumulate x 3]",
                                      "o:1 -> o:2 [accumulate x 3]",
                                      "o:2 -> r:1 [DtoH copy x 3]",
                                  }));
}

TEST_F(Filters, CollapseKeepsWhatFollowsTheLoopConnected) {
  add_loop(2);
  int64_t r2 = buffer("r2", AllocKind::PageableHost, 0x9000, 256);
  copy(CopyKind::DtoH, 4, r2, 256, 1000);  // reads o after the loop
  // The last iteration's o stands as the first iteration's o:2.
  EXPECT_EQ(shown_collapsed(), (Edges{
                                      "h:0 -> d:1 [HtoD copy x 2]",
                                      "d:1 -> o:2 [accumulate x 2]",
                                      "o:1 -> o:2 [accumulate x 2]",
                                      "o:2 -> r:1 [DtoH copy x 2]",
                                      "o:2 -> r2:1 [DtoH copy]",
                                  }));
}

// A folded op's every write stands as the matching write of its first
// iteration's op, the second as the second: what reads them after the
// loop is shown reading those.
TEST_F(Filters, CollapseMapsEachWriteOfAFoldedOpToTheFirstIterations) {
  int64_t h = buffer("h", AllocKind::PageableHost, 0x1000, 256);
  int64_t a = buffer("a", AllocKind::Device, 0x7f0000000000, 256);
  int64_t b = buffer("b", AllocKind::Device, 0x7f0000001000, 256);
  for (int64_t i = 0; i < 3; ++i) {
    kernel("split",
           {{a, AccessKind::Write, AccessSource::Assumed}, {b, AccessKind::Write, AccessSource::Assumed}},
           100 + 100 * i);
  }
  copy(CopyKind::DtoH, a, h, 256, 1000);
  copy(CopyKind::DtoH, b, h, 256, 1100);
  // The first launch writes a and b from nothing; the two after it repeat
  // (each reads what the one before wrote) and fold into the second.
  EXPECT_EQ(shown_collapsed(), (Edges{
                                      "a:1 -> a:2 [split x 2]",
                                      "b:1 -> b:2 [split x 2]",
                                      "a:2 -> h:1 [DtoH copy]",
                                      "b:2 -> h:2 [DtoH copy]",
                                  }));
}

// A page drawing only the first values gets them and the edges between
// them, and the count of every value the view shows.
TEST_F(Filters, AValueLimitKeepsTheEdgesBetweenTheFirstValues) {
  add_loop(1);
  Graph graph = build();
  ViewFilter filter;
  EXPECT_EQ(shown(graph, filter).size(), 4u);
  std::vector<uint32_t> all = make_view(graph, filter).values;
  filter.value_limit = 3;
  GraphView cut = make_view(graph, filter);
  EXPECT_EQ(cut.values, std::vector<uint32_t>(all.begin(), all.begin() + 3));
  EXPECT_EQ(cut.values_shown, all.size());
  EXPECT_EQ(shown(graph, filter), (Edges{"h:0 -> d:1 [HtoD copy]"}));
  filter.value_limit = 0;
  EXPECT_TRUE(shown(graph, filter).empty());
}

// The limited view is the whole view cut at its first N values, for every
// N, whatever else it filters: a kernel reading and writing several
// buffers (its dependences every read by every write), one too small to
// show, and iterations collapsed or not.
TEST_F(Filters, AValueLimitCutsTheWholeViewAtItsFirstValues) {
  int64_t small = buffer("small", AllocKind::Device, 0x7f0000002000, 8);
  int64_t a = buffer("a", AllocKind::Device, 0x7f0000003000, 256);
  add_loop(3);
  for (int64_t i = 0; i < 3; ++i) {
    kernel("mix",
           {{a, AccessKind::ReadWrite, AccessSource::Assumed},
            {small, AccessKind::ReadWrite, AccessSource::Assumed},
            {4, AccessKind::Read, AccessSource::ConstSignature}},
           500 + 10 * i);
  }
  Graph graph = build();
  for (bool collapse : {false, true}) {
    for (int64_t min_bytes : {0, 16}) {
      ViewFilter filter;
      filter.collapse_iterations = collapse;
      filter.min_bytes = min_bytes;
      GraphView whole = make_view(graph, filter);
      for (size_t limit = 0; limit <= whole.values.size(); ++limit) {
        filter.value_limit = limit;
        GraphView cut = make_view(graph, filter);
        EXPECT_EQ(cut.values, std::vector<uint32_t>(whole.values.begin(), whole.values.begin() + limit));
        EXPECT_EQ(cut.values_shown, whole.values.size());
        EXPECT_EQ(whole.values_shown, whole.values.size());
        EXPECT_EQ(cut.ops, whole.ops);
        std::vector<std::pair<uint32_t, uint32_t>> expected, got;
        uint32_t last = limit == 0 ? 0 : whole.values[limit - 1];
        for (const ViewEdge& e : whole.edges) {
          if (limit > 0 && e.src_value <= last && e.dst_value <= last) expected.emplace_back(e.src_value, e.dst_value);
        }
        for (const ViewEdge& e : cut.edges) got.emplace_back(e.src_value, e.dst_value);
        EXPECT_EQ(got, expected) << "collapse " << collapse << ", min_bytes " << min_bytes << ", limit " << limit;
      }
    }
  }
}

TEST_F(Filters, TimeWindowKeepsOperationsInsideIt) {
  add_loop(3);
  Graph graph = build();
  ViewFilter filter;
  filter.from_ns = 200;  // the second iteration's ops run 205..255
  filter.to_ns = 260;
  EXPECT_EQ(shown(graph, filter), (Edges{
                                      "h:0 -> d:2 [HtoD copy]",
                                      "d:2 -> o:3 [accumulate]",
                                      "o:2 -> o:3 [accumulate]",
                                      "o:3 -> r:2 [DtoH copy]",
                                  }));
}

TEST_F(Filters, NvtxRangeSelectsTheOperationsIssuedInsideIt) {
  add_loop(3);
  testing::NvtxRangeRow range;
  range.name = "step 3";
  range.start_ns = 290;
  range.end_ns = 350;
  trace_->add(range);
  CommandOutput result = run_apptracer("dvdg --no-store " + path_ + " --nvtx 'step 3' --json -");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("\"version\":4"), std::string::npos);  // o:4
  EXPECT_EQ(result.out.find("\"version\":2"), std::string::npos);
  CommandOutput missing = run_apptracer("dvdg --no-store " + path_ + " --nvtx nowhere --json -");
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_EQ(missing.err, "apptracer: no NVTX range named 'nowhere' in the trace\n");
}

TEST_F(Filters, AllocationFilterKeepsEdgesTouchingIt) {
  add_vector_add(*this);
  Graph graph = build();
  ViewFilter filter;
  filter.alloc_ids = {2};  // b_h
  EXPECT_EQ(shown(graph, filter), (Edges{"b_h:0 -> b_d:1 [HtoD copy]"}));
}

TEST_F(Filters, DeviceFilterKeepsOperationsOnThatDevice) {
  add_vector_add(*this);
  Graph graph = build();
  ViewFilter filter;
  filter.device = 0;
  EXPECT_EQ(shown(graph, filter).size(), 5u);
  filter.device = 1;
  EXPECT_TRUE(shown(graph, filter).empty());
}

TEST_F(Filters, MinimumSizeDropsSmallValues) {
  int64_t small_h = buffer("small_h", AllocKind::PageableHost, 0x1000, 16);
  int64_t big_h = buffer("big_h", AllocKind::PageableHost, 0x2000, 1 << 20);
  int64_t small_d = buffer("small_d", AllocKind::Device, 0x7f0000000000, 16);
  int64_t big_d = buffer("big_d", AllocKind::Device, 0x7f0000100000, 1 << 20);
  copy(CopyKind::HtoD, small_h, small_d, 16, 100);
  copy(CopyKind::HtoD, big_h, big_d, 1 << 20, 200);
  Graph graph = build();
  ViewFilter filter;
  filter.min_bytes = 4096;
  EXPECT_EQ(shown(graph, filter), (Edges{"big_h:0 -> big_d:1 [HtoD copy]"}));
}

TEST_F(DvdgTest, WhyPrintsTheChainThatProducedAValue) {
  VectorAdd ids = add_vector_add(*this);
  (void)ids;
  Graph graph = build();
  uint32_t s_h = resolve_value(graph, "0x5010");  // inside s_h: its latest version
  EXPECT_EQ(value_name(graph, s_h), "s_h:1");
  std::ostringstream out;
  print_why(graph, s_h, out);
  std::string text = out.str();
  EXPECT_NE(text.find("produced by 4 operation(s)"), std::string::npos) << text;
  // In program order: both copies, the kernel, the copy back.
  size_t a = text.find("HtoD copy"), k = text.find("kernel vector_add"), d = text.find("DtoH copy");
  EXPECT_LT(a, k);
  EXPECT_LT(k, d);
  EXPECT_NE(d, std::string::npos);
}

// The times a query shows count from the trace's start (meta start_ns).
TEST_F(DvdgTest, QueriesShowTimesSinceTheTracesStart) {
  trace_->set_meta("start_ns", "90");
  int64_t d = buffer("d", AllocKind::Device, 0x7f0000000000, 128);
  int64_t h = buffer("h", AllocKind::PageableHost, 0x1000, 128);
  copy(CopyKind::HtoD, h, d, 128, 100);
  Graph graph = build();
  EXPECT_EQ(graph.origin.ns, 90);
  std::ostringstream out;
  print_why(graph, resolve_value(graph, "0x7f0000000000"), out);
  // The copy's GPU start, 105 on the trace's clock.
  EXPECT_NE(out.str().find("HtoD copy at 15 ns"), std::string::npos) << out.str();
}

TEST_F(DvdgTest, WhyPointsAtAReadOfUninitializedMemory) {
  int64_t d = buffer("d", AllocKind::Device, 0x7f0000000000, 128);
  int64_t h = buffer("h", AllocKind::PageableHost, 0x1000, 128);
  copy(CopyKind::DtoH, d, h, 128, 100);
  Graph graph = build();
  std::ostringstream out;
  print_why(graph, resolve_value(graph, "0x1000"), out);
  EXPECT_EQ(out.str(),
            "v3: alloc #2 pageable host, 0x1000, 128 B, version 1\n"
            "produced by 1 operation(s), in program order:\n"
            "  op 3: DtoH copy at 105 ns (stream 7)\n"
            "    reads v1: alloc #1 device (device 0), 0x7f0000000000, 128 B, version 0 (read "
            "uninitialized)"
            "  <- UNINITIALIZED\n"
            "    writes v3: alloc #2 pageable host, 0x1000, 128 B, version 1\n");
}

TEST_F(DvdgTest, ConsumersListsTheOperationsThatReadAValue) {
  add_vector_add(*this);
  Graph graph = build();
  uint32_t a_d = resolve_value(graph, "0x7f0000000000");
  std::ostringstream out;
  print_consumers(graph, a_d, out);
  EXPECT_NE(out.str().find("read by 1 operation(s)"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("kernel vector_add"), std::string::npos);
  EXPECT_NE(out.str().find("writes v"), std::string::npos);
}

TEST_F(DvdgTest, QueriesThroughTheCommandLine) {
  add_vector_add(*this);
  CommandOutput why = run_apptracer("dvdg " + path_ + " --why 0x5000");
  ASSERT_EQ(why.exit_code, 0) << why.err;
  EXPECT_NE(why.out.find("vector_add"), std::string::npos);
  CommandOutput consumers = run_apptracer("dvdg " + path_ + " --consumers v1");
  ASSERT_EQ(consumers.exit_code, 0) << consumers.err;
  CommandOutput unknown = run_apptracer("dvdg " + path_ + " --why v999");
  EXPECT_NE(unknown.exit_code, 0);
  EXPECT_EQ(unknown.err.find("apptracer: no value 'v999'"), 0u) << unknown.err;
  CommandOutput nowhere = run_apptracer("dvdg " + path_ + " --why 0x42");
  EXPECT_NE(nowhere.exit_code, 0);
  EXPECT_EQ(nowhere.err, "apptracer: no allocation or copied region contains 0x42\n");
}

TEST_F(DvdgTest, AGraphWithoutValuesSaysItHasNone) {
  trace_.reset();  // no allocation, no operation
  CommandOutput unknown = run_apptracer("dvdg --no-store " + path_ + " --why v1");
  EXPECT_NE(unknown.exit_code, 0);
  EXPECT_EQ(unknown.err, "apptracer: no value 'v1': the graph has no values (no operation read or "
                         "wrote memory)\n");
}

}  // namespace
}  // namespace apptracer::dvdg
