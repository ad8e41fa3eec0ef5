// --exact on the analyzer side, on traces the tests write: the DVDG taking a
// kernel's exact accesses over its arguments' assumed ones, `stats --report
// exact` judging the signature heuristic, and the two-run join.
#include <gtest/gtest.h>

#include <cstdio>

#include "dvdg_fixture.h"
#include "analyzer/record/exact_coverage_store.h"
#include "analyzer/record/exact_join.h"
#include "report_test_helpers.h"
#include "analyzer/stats/stats_reports.h"

namespace apptracer::dvdg {
namespace {

using Edges = std::vector<std::string>;

constexpr int64_t kX = 0x7f0000000000, kY = 0x7f0000001000, kBytes = 4096;

class ExactTest : public DvdgTest {
 public:
  // A launch of `kernel_id` as --exact recorded it.
  int64_t exact_launch(int64_t kernel_id, ExactGap incomplete = ExactGap::None,
                       bool approximate = false) {
    ExactLaunchRow row;
    row.id = ++launches_;
    row.kernel_id = kernel_id;
    row.pages = 1;
    row.approximate = approximate;
    row.incomplete = incomplete;
    return trace_->add(row);
  }

  // Device buffers x and y at kX and kY; x (and y when asked) copied in
  // from host buffer h at 100 (150).
  std::pair<int64_t, int64_t> device_pair(bool y_copied_in) {
    int64_t h = buffer("h", AllocKind::PageableHost, 0x1000, kBytes);
    int64_t x = buffer("x", AllocKind::Device, kX, kBytes);
    int64_t y = buffer("y", AllocKind::Device, kY, kBytes);
    copy(CopyKind::HtoD, h, x, kBytes, 100);
    if (y_copied_in) copy(CopyKind::HtoD, h, y, kBytes, 150);
    return {x, y};
  }

  // A TMA kernel reading x and writing y, as --exact recorded it: incomplete
  // (tensor copies the sanitizer cannot see), so it keeps its arguments'
  // accesses beside the exact ones.
  int64_t tma_launch(int64_t x, int64_t y) {
    int64_t k = kernel("tma", {{x, AccessKind::Read, AccessSource::ConstSignature},
                               {y, AccessKind::ReadWrite, AccessSource::Assumed}},
                       200);
    return exact_launch(k, ExactGap::TensorCopies);
  }

  // A TMA kernel the sanitizer saw nothing of, whose arguments were not read
  // (or hold only a word in no allocation), then a kernel reading c exactly.
  void silent_tensor_copy_then_exact_read(bool arguments_read) {
    int64_t c = buffer("c", AllocKind::Device, kX, kBytes);
    int64_t out = buffer("out", AllocKind::Device, kY, kBytes);
    int64_t gemm = kernel("tma_gemm", {}, 200);
    if (arguments_read) {
      testing::KernelArgRow word;
      word.kernel_id = gemm;
      word.raw_value = 0x1234;
      trace_->add(word);
    }
    exact_launch(gemm, ExactGap::TensorCopies);
    int64_t launch = exact_launch(kernel("consume", {{c, AccessKind::Read, AccessSource::ConstSignature},
                                                     {out, AccessKind::ReadWrite, AccessSource::Assumed}},
                                         300));
    trace_->add_exact_range(launch, c, 0, kBytes, AccessKind::Read);
    trace_->add_exact_range(launch, out, 0, kBytes, AccessKind::Write);
    for (const Op& op : build().ops) EXPECT_FALSE(op.reads_uninitialized);
  }

  int64_t launches_ = 0;
};

// scale(float* x, float* y): both assumed read-write; x is only read.
TEST_F(ExactTest, AnAssumedReadWritePointerOnlyReadMakesNoNewVersion) {
  int64_t h = buffer("h", AllocKind::PageableHost, 0x1000, kBytes);
  int64_t x = buffer("x", AllocKind::Device, kX, kBytes);
  int64_t y = buffer("y", AllocKind::Device, kY, kBytes);
  copy(CopyKind::HtoD, h, x, kBytes, 100);
  int64_t k = kernel("scale",
                     {{x, AccessKind::ReadWrite, AccessSource::Assumed},
                      {y, AccessKind::ReadWrite, AccessSource::Assumed}},
                     200);
  copy(CopyKind::DtoH, x, h, kBytes, 300);
  Edges assumed = {"h:0 -> x:1 [HtoD copy]", "x:1 -> x:2 [scale]", "x:1 -> y:1 [scale]",
                   "x:2 -> h:1 [DtoH copy]"};
  EXPECT_EQ(edges(build()), assumed);

  int64_t launch = exact_launch(k);
  trace_->add_exact_range(launch, x, 0, kBytes, AccessKind::Read);
  trace_->add_exact_range(launch, y, 0, kBytes, AccessKind::Write);
  EXPECT_EQ(edges(build()), (Edges{"h:0 -> x:1 [HtoD copy]", "x:1 -> y:1 [scale]",
                                   "x:1 -> h:1 [DtoH copy]"}));
  // `dvdg --ignore-exact`: the graph the signatures alone give, for comparison.
  EXPECT_EQ(edges(build(KernelAccesses::Signatures)), assumed);
}

// What the signature cannot know: a non-const pointer read before anything
// wrote it is a read of uninitialized memory.
TEST_F(ExactTest, AnExactReadOfNeverWrittenMemoryIsFlagged) {
  int64_t x = buffer("x", AllocKind::Device, kX, kBytes);
  int64_t y = buffer("y", AllocKind::Device, kY, kBytes);
  int64_t k = kernel("use_garbage",
                     {{x, AccessKind::ReadWrite, AccessSource::Assumed},
                      {y, AccessKind::ReadWrite, AccessSource::Assumed}},
                     100);
  for (const Value& value : build().values) EXPECT_FALSE(value.read_uninitialized);

  int64_t launch = exact_launch(k);
  trace_->add_exact_range(launch, x, 0, 64, AccessKind::Read);
  trace_->add_exact_range(launch, y, 0, kBytes, AccessKind::Write);
  Graph graph = build();
  EXPECT_EQ(edges(graph), (Edges{"x:0 -> y:1 [use_garbage] (uninitialized)"}));
  size_t flagged = 0;
  for (const Op& op : graph.ops) flagged += op.reads_uninitialized;
  EXPECT_EQ(flagged, 1u);
}

// A partial write makes a new version of the bytes it wrote only (the rest
// keeps the previous one); a kernel touching memory none of its arguments
// points into gets that access too.
TEST_F(ExactTest, PartialWritesCarryAndAccessesOutsideTheArgumentsCount) {
  auto [x, y] = device_pair(true);
  int64_t k = kernel("head", {{y, AccessKind::ReadWrite, AccessSource::Assumed}}, 200);
  int64_t launch = exact_launch(k);
  trace_->add_exact_range(launch, x, 0, 256, AccessKind::Read);  // through a pointer in a struct
  trace_->add_exact_range(launch, y, 0, 512, AccessKind::Write);
  Edges got = edges(build());
  EXPECT_EQ(got, (Edges{"h:0 -> x:1 [HtoD copy]", "h:0 -> y:1 [HtoD copy]",
                        "x:1 -> y[0,512):2 [head]"}));
}

// TMA tensor copies the sanitizer cannot see: the launch keeps its
// arguments' accesses beside the exact ones.
TEST_F(ExactTest, AnIncompleteLaunchKeepsItsArgumentsAccesses) {
  auto [x, y] = device_pair(false);
  int64_t launch = tma_launch(x, y);
  trace_->add_exact_range(launch, y, 0, kBytes, AccessKind::Write);
  EXPECT_EQ(edges(build()), (Edges{"h:0 -> x:1 [HtoD copy]", "x:1 -> y:1 [tma]"}));
}

// Such a launch writes a location twice (an exact part, an assumed whole):
// one write of the span both cover, never an edge from the op to itself.
TEST_F(ExactTest, TwoWritesOfOneLocationByOneLaunchAreOneWrite) {
  auto [x, y] = device_pair(true);
  int64_t launch = tma_launch(x, y);
  trace_->add_exact_range(launch, y, 0, 512, AccessKind::Write);
  EXPECT_EQ(edges(build()), (Edges{"h:0 -> x:1 [HtoD copy]", "h:0 -> y:1 [HtoD copy]",
                                   "x:1 -> y:2 [tma]", "y:1 -> y:2 [tma]"}));
}

// A Hopper GEMM or convolution (cuDNN's sm90_xmma, cuBLAS's nvjet) moves
// its tiles with TMA tensor copies, which the sanitizer never reports: its
// output looks never written. The launch is not covered there, so its
// arguments' accesses stand (a possible write), and a kernel the sanitizer
// sees whole reading that output reads data, not garbage.
TEST_F(ExactTest, ATensorCopyKernelsOutputReadExactlyLaterIsNoUninitializedRead) {
  auto [a, c] = device_pair(false);
  int64_t out = buffer("out", AllocKind::Device, 0x7f0000002000, kBytes);
  int64_t gemm = kernel("tma_gemm", {{a, AccessKind::Read, AccessSource::ConstSignature},
                                     {c, AccessKind::ReadWrite, AccessSource::Assumed}},
                        200);
  exact_launch(gemm, ExactGap::TensorCopies);  // no range: the sanitizer saw nothing
  int64_t use = kernel("consume", {{c, AccessKind::ReadWrite, AccessSource::Assumed},
                                   {out, AccessKind::ReadWrite, AccessSource::Assumed}},
                       300);
  int64_t launch = exact_launch(use);
  trace_->add_exact_range(launch, c, 0, kBytes, AccessKind::Read);
  trace_->add_exact_range(launch, out, 0, kBytes, AccessKind::Write);
  Graph graph = build();
  // consume's exact ranges are used: c only read, so no new version of it.
  EXPECT_EQ(edges(graph), (Edges{"h:0 -> x:1 [HtoD copy]", "x:1 -> y:1 [tma_gemm]",
                                 "y:1 -> out:1 [consume]"}));
  for (const Op& op : graph.ops) EXPECT_FALSE(op.reads_uninitialized);
}

// Such a launch whose arguments could not be read, or hold no pointer the
// tracer could resolve (its tensor maps' addresses), may have written
// anything: a later exact read of memory allocated before it is no
// uninitialized read.
TEST_F(ExactTest, ATensorCopyKernelWithoutArgumentsMayHaveWrittenAnything) {
  silent_tensor_copy_then_exact_read(false);
}

TEST_F(ExactTest, ATensorCopyKernelWithoutResolvedPointersMayHaveWrittenAnything) {
  silent_tensor_copy_then_exact_read(true);
}

// cuBLAS's split-K kernels store partial tiles to a workspace with TMA and
// read them back with plain loads: the sanitizer sees the read, not the
// write before it. A read in memory the launch may also reach through tensor
// maps is possible, never certain.
TEST_F(ExactTest, AReadSeenInMemoryATensorCopyMayHaveWrittenIsNotCertain) {
  int64_t workspace = buffer("ws", AllocKind::Device, kX, kBytes);
  int64_t out = buffer("out", AllocKind::Device, kY, kBytes);
  int64_t k = kernel("splitk_gemm", {{workspace, AccessKind::ReadWrite, AccessSource::Assumed},
                                     {out, AccessKind::ReadWrite, AccessSource::Assumed}},
                     200);
  int64_t launch = exact_launch(k, ExactGap::TensorCopies);
  trace_->add_exact_range(launch, workspace, 0, kBytes, AccessKind::Read);
  trace_->add_exact_range(launch, out, 0, kBytes, AccessKind::Write);
  Graph graph = build();
  for (const Op& op : graph.ops) EXPECT_FALSE(op.reads_uninitialized);
  for (const Edge& edge : edges_of(graph)) EXPECT_FALSE(edge.uninitialized_read);
}

// A framework's segment holds many tensors: a kernel reading two of them
// reads those bytes, not the tensor allocated between them and not yet
// written, nor the free bytes beyond it.
TEST_F(ExactTest, ExactReadsOfTwoTensorsOfASegmentAreNotReadsOfWhatLiesBetween) {
  int64_t h = buffer("h", AllocKind::PageableHost, 0x1000, kBytes);
  int64_t segment = buffer("segment", AllocKind::Device, kX, 4 * kBytes);
  int64_t out = buffer("out", AllocKind::Device, 0x7f0000100000, kBytes);
  block("a", segment, 0, kBytes, 10);
  block("b", segment, kBytes, kBytes, 10);  // allocated, written only later
  block("c", segment, 3 * kBytes, kBytes, 10);
  copy(CopyKind::HtoD, h, segment, kBytes, 100);
  copy(CopyKind::HtoD, h, segment, kBytes, 150, 7, 3 * kBytes);
  int64_t k = kernel("add", {{segment, AccessKind::Read, AccessSource::ConstSignature},
                             {segment, AccessKind::Read, AccessSource::ConstSignature, 3 * kBytes},
                             {out, AccessKind::ReadWrite, AccessSource::Assumed}},
                     200);
  int64_t launch = exact_launch(k);
  trace_->add_exact_range(launch, segment, 0, kBytes, AccessKind::Read);
  trace_->add_exact_range(launch, segment, 3 * kBytes, kBytes, AccessKind::Read);
  trace_->add_exact_range(launch, out, 0, kBytes, AccessKind::Write);
  Graph graph = build();
  EXPECT_EQ(edges(graph), (Edges{"h:0 -> a:1 [HtoD copy]", "h:0 -> c:1 [HtoD copy]",
                                 "a:1 -> out:1 [add]", "c:1 -> out:1 [add]"}));
  for (const Op& op : graph.ops) EXPECT_FALSE(op.reads_uninitialized);
}

// A kernel seen whole still reads never-written memory for certain, to the
// byte: reading past a tensor into the next, unwritten one is reported.
TEST_F(ExactTest, AnExactReadIntoAnUnwrittenTensorIsStillFlagged) {
  int64_t h = buffer("h", AllocKind::PageableHost, 0x1000, kBytes);
  int64_t segment = buffer("segment", AllocKind::Device, kX, 2 * kBytes);
  int64_t out = buffer("out", AllocKind::Device, kY + 0x100000, kBytes);
  block("a", segment, 0, kBytes, 10);
  block("b", segment, kBytes, kBytes, 10);
  copy(CopyKind::HtoD, h, segment, kBytes, 100);
  int64_t k = kernel("read_past", {{segment, AccessKind::Read, AccessSource::ConstSignature},
                                   {out, AccessKind::ReadWrite, AccessSource::Assumed}},
                     200);
  int64_t launch = exact_launch(k);
  trace_->add_exact_range(launch, segment, 0, kBytes + 32, AccessKind::Read);
  trace_->add_exact_range(launch, out, 0, kBytes, AccessKind::Write);
  EXPECT_EQ(edges(build()), (Edges{"h:0 -> a:1 [HtoD copy]", "a:1 -> out:1 [read_past]",
                                   "b:0 -> out:1 [read_past] (uninitialized)"}));
}

// The sanitizer reports ranges rounded out to its 32-byte granules: a
// kernel reading an 8-byte counter a copy wrote shows as reading the
// counter's whole granule, whose other 24 bytes nothing wrote. Only a whole
// granule nothing wrote is read uninitialized for certain.
TEST_F(ExactTest, OnlyAWholeUnwrittenGranuleIsReadUninitialized) {
  trace_->set_meta("exact.granularity_bytes", "32");
  int64_t h = buffer("h", AllocKind::PageableHost, 0x1000, kBytes);
  int64_t x = buffer("x", AllocKind::Device, kX, kBytes);
  int64_t y = buffer("y", AllocKind::Device, kY, kBytes);
  copy(CopyKind::HtoD, h, x, 8, 100, 7, 32);
  int64_t k = kernel("increment", {{x, AccessKind::ReadWrite, AccessSource::Assumed},
                                   {y, AccessKind::ReadWrite, AccessSource::Assumed}},
                     200);
  int64_t launch = exact_launch(k);
  trace_->add_exact_range(launch, x, 32, 32, AccessKind::Read);
  trace_->add_exact_range(launch, y, 0, 32, AccessKind::Write);
  Graph graph = build();
  EXPECT_EQ(edges(graph), (Edges{"h:0 -> x[32,40):1 [HtoD copy]", "x[32,40):1 -> y[0,32):1 [increment]"}));
  for (const Op& op : graph.ops) EXPECT_FALSE(op.reads_uninitialized);

  // Reading one granule further reads 32 bytes nothing wrote.
  int64_t further = exact_launch(kernel("read_further", {{x, AccessKind::ReadWrite, AccessSource::Assumed},
                                                         {y, AccessKind::ReadWrite, AccessSource::Assumed}},
                                        300));
  trace_->add_exact_range(further, x, 32, 64, AccessKind::Read);
  trace_->add_exact_range(further, y, 0, 32, AccessKind::Write);
  size_t flagged = 0;
  for (const Op& op : build().ops) flagged += op.reads_uninitialized;
  EXPECT_EQ(flagged, 1u);
}

// What the sanitizer saw, per launch and per allocation pointed into.
TEST_F(ExactTest, CoverageIsExactOnlyWhereEverythingWasSeen) {
  int64_t x = buffer("x", AllocKind::Device, kX, kBytes);
  int64_t y = buffer("y", AllocKind::Device, kY, kBytes);
  auto launch_of = [&](const std::string& name, ExactGap gap) {
    return exact_launch(kernel(name, {{x, AccessKind::Read, AccessSource::ConstSignature},
                                      {y, AccessKind::ReadWrite, AccessSource::Assumed}},
                               100 * (launches_ + 1)),
                        gap);
  };
  int64_t whole = launch_of("whole", ExactGap::None);
  trace_->add_exact_range(whole, x, 0, kBytes, AccessKind::Read);
  trace_->add_exact_range(whole, y, 0, kBytes, AccessKind::Write);
  int64_t unused = launch_of("unused_pointer", ExactGap::None);
  trace_->add_exact_range(unused, y, 0, kBytes, AccessKind::Write);
  int64_t tma = launch_of("tma", ExactGap::TensorCopies);
  trace_->add_exact_range(tma, x, 0, 64, AccessKind::Read);
  launch_of("tma_silent", ExactGap::TensorCopies);
  int64_t uninstrumented = launch_of("uninstrumented", ExactGap::NotInstrumented);
  trace_->add_exact_range(uninstrumented, x, 0, 64, AccessKind::Read);

  StoredCoverage stored = store_exact_coverage(trace_->db());
  EXPECT_EQ(stored.launches, 5);
  EXPECT_EQ(stored.launches_exact, 1);
  Statement rows = trace_->db().prepare(
      "SELECT c.launch_id, coalesce(a.bytes, 0), v.name FROM exact_coverage c "
      "JOIN enum_values v ON v.enum = 'exact_coverage' AND v.value = c.coverage "
      "LEFT JOIN allocations a ON a.id = c.alloc_id ORDER BY c.launch_id, c.alloc_id IS NOT NULL, "
      "c.alloc_id");
  std::vector<std::string> got;
  while (rows.step()) {
    got.push_back(std::to_string(rows.int64(0)) + (rows.int64(1) ? " pointer " : " launch ") +
                  rows.text(2));
  }
  EXPECT_EQ(got, (std::vector<std::string>{
                     "1 launch exact", "1 pointer exact", "1 pointer exact",      //
                     "2 launch partial", "2 pointer none", "2 pointer exact",     // x unused
                     "3 launch partial", "3 pointer partial", "3 pointer none",   //
                     "4 launch none", "4 pointer none", "4 pointer none",         //
                     "5 launch none", "5 pointer none", "5 pointer none"}));
  // Stored again (a second record of the same trace): the rows are replaced.
  EXPECT_EQ(store_exact_coverage(trace_->db()).launches, 5);
  Statement count = trace_->db().prepare("SELECT count(*) FROM exact_coverage");
  ASSERT_TRUE(count.step());
  EXPECT_EQ(count.int64(0), 15);
}

TEST_F(ExactTest, ReportCountsWhereTheSignatureWasWrong) {
  int64_t x = buffer("x", AllocKind::Device, kX, kBytes);
  int64_t y = buffer("y", AllocKind::Device, kY, kBytes);
  int64_t z = buffer("z", AllocKind::Device, 0x7f0000002000, kBytes);
  int64_t c = buffer("c", AllocKind::Device, 0x7f0000003000, kBytes);
  int64_t w = buffer("w", AllocKind::Device, 0x7f0000004000, kBytes);
  for (int64_t ns : {100, 200}) {
    int64_t k = kernel("step",
                       {{x, AccessKind::ReadWrite, AccessSource::Assumed},    // only read
                        {y, AccessKind::ReadWrite, AccessSource::Assumed},    // only written
                        {z, AccessKind::ReadWrite, AccessSource::Assumed},    // never touched
                        {c, AccessKind::Read, AccessSource::ConstSignature}},  // right
                       ns);
    int64_t launch = exact_launch(k, ns == 200 ? ExactGap::TensorCopies : ExactGap::None);
    trace_->add_exact_range(launch, x, 0, kBytes, AccessKind::Read);
    trace_->add_exact_range(launch, y, 0, kBytes, AccessKind::Write);
    trace_->add_exact_range(launch, c, 0, 64, AccessKind::Read);
    trace_->add_exact_range(launch, w, 128, 64, AccessKind::ReadWrite);  // no argument
  }
  kernel("not_recorded", {{x, AccessKind::ReadWrite, AccessSource::Assumed}}, 300);
  ReportOutput output = testing::run_report(exact_report, trace_->db());
  ASSERT_EQ(output.tables.size(), 1u);
  const Table& table = output.tables[0];
  ASSERT_EQ(table.rows.size(), 1u) << "kernels without exact data are not judged";
  using testing::integer;
  EXPECT_EQ(testing::text(table, 0, "kernel"), "step");
  EXPECT_EQ(integer(table, 0, "launches"), 2);
  // The first launch is seen whole but for z (no access: not covered); the
  // second copies through tensor maps too: nothing is judged from it.
  EXPECT_EQ(integer(table, 0, "launches_exact"), 0);
  EXPECT_EQ(integer(table, 0, "pointers"), 8);
  EXPECT_EQ(integer(table, 0, "pointers_exact"), 3);
  EXPECT_EQ(integer(table, 0, "pointers_partial"), 3);
  EXPECT_EQ(integer(table, 0, "pointers_none"), 2);
  EXPECT_EQ(integer(table, 0, "assumed_rw"), 6);
  EXPECT_EQ(integer(table, 0, "rw_only_read"), 1);
  EXPECT_EQ(integer(table, 0, "rw_only_written"), 1);
  EXPECT_EQ(integer(table, 0, "const_written"), 0);
  EXPECT_EQ(integer(table, 0, "never_touched"), 1);
  EXPECT_EQ(integer(table, 0, "outside"), 2);
  EXPECT_EQ(integer(table, 0, "outside_bytes"), 128);
  EXPECT_EQ(integer(table, 0, "incomplete"), 1);
  EXPECT_EQ(integer(table, 0, "approximate"), 0);
}

TEST_F(ExactTest, ReportSaysWhenTheTraceHasNoExactData) {
  kernel("k", {}, 100);
  ReportOutput output = testing::run_report(exact_report, trace_->db());
  EXPECT_TRUE(output.tables.empty());
  EXPECT_NE(output.note.find("--exact"), std::string::npos) << output.note;
}

// The two-run scheme: the sanitizer run's trace, at its own addresses.
class ExactJoinTest : public ExactTest {
 public:
  void SetUp() override {
    ExactTest::SetUp();
    theirs_path_ = path_ + ".sanitizer.db";
    std::remove(theirs_path_.c_str());
    theirs_ = std::make_unique<testing::TraceBuilder>(theirs_path_);
  }
  void TearDown() override {
    theirs_.reset();
    std::remove(theirs_path_.c_str());
    ExactTest::TearDown();
  }
  int64_t their_allocation(int64_t address, int64_t bytes) {
    testing::AllocationRow row;
    row.address = address;
    row.bytes = bytes;
    return theirs_->add(row);
  }
  int64_t their_launch(const std::string& name) {
    ExactLaunchRow row;
    row.id = ++their_launches_;
    row.name_id = theirs_->string_id(name);
    row.pages = 1;
    row.approximate = 0;
    row.incomplete = ExactGap::None;
    return theirs_->add(row);
  }
  void their_range(int64_t launch, std::optional<int64_t> alloc_id, int64_t lo, int64_t hi,
                   AccessKind access, int64_t offset = 0) {
    ExactAccessRow row;
    row.launch_id = launch;
    row.alloc_id = alloc_id;
    if (alloc_id) row.alloc_offset = offset;
    row.access = access;
    row.lo = lo;
    row.hi = hi;
    row.approximate = 0;
    theirs_->add(row);
  }

  std::string theirs_path_;
  std::unique_ptr<testing::TraceBuilder> theirs_;
  int64_t their_launches_ = 0;
};

TEST_F(ExactJoinTest, LaunchesJoinByOrderAndRangesMoveToTheNormalRunsAllocations) {
  int64_t h = buffer("h", AllocKind::PageableHost, 0x1000, kBytes);
  int64_t x = buffer("x", AllocKind::Device, kX, kBytes, 1);
  int64_t y = buffer("y", AllocKind::Device, kY, kBytes, 2);
  copy(CopyKind::HtoD, h, x, kBytes, 100);
  kernel("scale", {{x, AccessKind::ReadWrite, AccessSource::Assumed},
                   {y, AccessKind::ReadWrite, AccessSource::Assumed}},
         200);
  // The sanitizer run got other addresses for the same allocations.
  int64_t their_x = their_allocation(0x500000000000, kBytes);
  int64_t their_y = their_allocation(0x500000100000, kBytes);
  int64_t launch = their_launch("_Zscale");
  their_range(launch, their_x, 0x500000000000, 0x500000001000, AccessKind::Read);
  their_range(launch, their_y, 0x500000100040, 0x500000100080, AccessKind::Write, 0x40);
  their_range(launch, std::nullopt, 0x600000000000, 0x600000000020, AccessKind::Read);

  ExactJoinSummary summary = join_exact_runs(trace_->db(), theirs_->db());
  EXPECT_EQ(summary.launches, 1);
  EXPECT_EQ(summary.ranges, 3);
  EXPECT_EQ(summary.unmatched_ranges, 1);
  Statement rows = trace_->db().prepare(
      "SELECT alloc_id, alloc_offset, lo, hi FROM exact_kernel_accesses ORDER BY lo");
  std::vector<std::tuple<std::optional<int64_t>, std::optional<int64_t>, int64_t, int64_t>> got;
  while (rows.step()) {
    got.emplace_back(rows.optional_int64(0), rows.optional_int64(1), rows.int64(2),
                     rows.int64(3));
  }
  using Row = decltype(got)::value_type;
  EXPECT_EQ(got, (decltype(got){Row{std::nullopt, std::nullopt, 0x600000000000, 0x600000000020},
                                Row{x, 0, kX, kX + kBytes}, Row{y, 0x40, kY + 0x40, kY + 0x80}}));
  // Memory in no allocation the normal run knows is a region, as in any trace.
  EXPECT_EQ(edges(build()), (Edges{"h:0 -> x:1 [HtoD copy]", "x:1 -> y[64,128):1 [scale]",
                                   "region@0x600000000000:0 -> y[64,128):1 [scale]"}));
}

TEST_F(ExactJoinTest, RunsThatLaunchedDifferentKernelsAreNotJoined) {
  kernel("scale", {}, 100);
  kernel("shift", {}, 200);
  their_launch("_Zscale");
  their_launch("_Zsquare");
  try {
    join_exact_runs(trace_->db(), theirs_->db());
    FAIL() << "joined runs that diverged";
  } catch (const ExactJoinError& error) {
    EXPECT_NE(std::string(error.what()).find("diverge at kernel launch 2"), std::string::npos)
        << error.what();
  }
  Statement count = trace_->db().prepare("SELECT count(*) FROM exact_launches");
  ASSERT_TRUE(count.step());
  EXPECT_EQ(count.int64(0), 0) << "nothing is joined";
}

TEST_F(ExactJoinTest, RunsThatLaunchedMoreKernelsAreNotJoined) {
  kernel("scale", {}, 100);
  their_launch("_Zscale");
  their_launch("_Zscale");
  EXPECT_THROW(join_exact_runs(trace_->db(), theirs_->db()), ExactJoinError);
}

}  // namespace
}  // namespace apptracer::dvdg
