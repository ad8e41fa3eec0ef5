// Memory held for nothing (analyzer/diagnose/memory_rules.cpp): pieces live
// at the peak never used, allocated long before first use, freed long after
// last use; an allocator's cache at the peak; live memory growing step after
// step. Each saving is in bytes at the peak.
#include "diagnose_fixture.h"

namespace apptracer::diagnose {
namespace {

using A = AccessKind;

constexpr int64_t kMiB = 1 << 20;
constexpr int64_t kMs = 1'000'000;

class MemoryRules : public DiagnoseTest {
 protected:
  // A device buffer allocated at `alloc_ns` and freed at `free_ns`.
  int64_t device_buffer(int64_t bytes, int64_t alloc_ns, std::optional<int64_t> free_ns = std::nullopt) {
    int64_t id = buffer(AllocKind::Device, bytes, alloc_ns);
    if (free_ns) {
      Statement freed = trace.db().prepare("UPDATE allocations SET free_ns = ? WHERE id = ?");
      freed.bind(1, *free_ns).bind(2, id).run();
    }
    return id;
  }

  // A 4 MiB temporary from 10 to 20 ms, written at once: the peak.
  void transient_peak() {
    int64_t temporary = device_buffer(4 * kMiB, 10 * kMs, 20 * kMs);
    kernel("spike", 10 * kMs + 2'000, 1'000, {{temporary, A::Write}});
  }
};

TEST_F(MemoryRules, MemoryLiveAtThePeakThatNothingUsesIsNeverUsed) {
  int64_t used = device_buffer(kMiB, 0);
  kernel("fill", 5 * kMs, 1'000, {{used, A::Write}});
  int64_t unused = device_buffer(2 * kMiB, 0);
  auto found = findings("memory_never_used");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(rows_of(found[0], "allocations"), std::vector<int64_t>{unused});
  EXPECT_EQ(found[0].saving_bytes, 2 * kMiB);
  EXPECT_FALSE(found[0].saving_ns);
}

TEST_F(MemoryRules, AFrameworkBlockNobodyUsesIsNeverUsed) {
  int64_t segment = device_buffer(4 * kMiB, 0);
  int64_t used = trace.add_block(segment, 0, kMiB, 100);
  int64_t unused = trace.add_block(segment, kMiB, kMiB, 100);
  kernel("fill", 5 * kMs, 1'000, {{segment, A::Write}});
  auto found = findings("memory_never_used");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(rows_of(found[0], "sub_allocations"), std::vector<int64_t>{unused});
  EXPECT_NE(used, unused);
  EXPECT_EQ(found[0].saving_bytes, kMiB);
}

// cuBLAS's workspace, handed out by PyTorch's allocator inside aten::mm (in
// a segment of its own) and kept for the run with no launch argument
// showing it, is the library's, not the program's waste; a block nobody
// uses outside it still is.
TEST_F(MemoryRules, ALibrarysWorkspaceIsNoWasteOfTheProgram) {
  testing::FrameworkRangeRow mm;
  mm.name = "aten::mm";
  mm.start_ns = 1 * kMs;
  mm.end_ns = 2 * kMs;
  trace.add(mm);
  int64_t segment = device_buffer(64 * kMiB, 0);
  int64_t output = trace.add_block(segment, 0, kMiB, 1 * kMs + 100);
  int64_t workspace_segment = device_buffer(32 * kMiB, 1 * kMs + 150);
  int64_t workspace = trace.add_block(workspace_segment, 0, 32 * kMiB, 1 * kMs + 200);
  kernel("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_cublas", 1 * kMs + 2'000, 1'000, {{segment, A::Write}});
  int64_t unused = trace.add_block(segment, 40 * kMiB, 2 * kMiB, 3 * kMs);
  kernel("fill", 4 * kMs, 1'000, {{segment, A::Write}});
  auto found = findings("memory_never_used");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(rows_of(found[0], "sub_allocations"), std::vector<int64_t>{unused});
  EXPECT_NE(output, workspace);
}

TEST_F(MemoryRules, MemoryAllocatedLongBeforeItsFirstUseAtThePeak) {
  int64_t early = device_buffer(2 * kMiB, 0);
  transient_peak();
  kernel("first_touch", 50 * kMs, 1'000, {{early, A::Write}});
  auto found = findings("memory_allocated_early");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(rows_of(found[0], "allocations"), std::vector<int64_t>{early});
  EXPECT_EQ(found[0].saving_bytes, 2 * kMiB);
  EXPECT_EQ(found[0].names, std::vector<std::string>{"first_touch()"});
}

TEST_F(MemoryRules, LessThanAMebibyteHeldForNothingIsNoFinding) {
  device_buffer(kMiB - 4096, 0);
  transient_peak();
  EXPECT_TRUE(findings("memory_never_used").empty());
}

TEST_F(MemoryRules, MemoryFirstUsedBeforeThePeakIsNotEarly) {
  int64_t early = device_buffer(2 * kMiB, 0);
  kernel("first_touch", 5 * kMs, 1'000, {{early, A::Write}});
  transient_peak();
  kernel("again", 50 * kMs, 1'000, {{early, A::Read}, {sink(), A::Write}});
  EXPECT_TRUE(findings("memory_allocated_early").empty());
  EXPECT_TRUE(findings("memory_freed_late").empty());
}

TEST_F(MemoryRules, MemoryHeldLongAfterItsLastUseThroughThePeak) {
  int64_t late = device_buffer(3 * kMiB, 0, 40 * kMs);
  kernel("last_touch", 2 * kMs, 1'000, {{late, A::Write}});
  transient_peak();
  auto found = findings("memory_freed_late");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(rows_of(found[0], "allocations"), std::vector<int64_t>{late});
  EXPECT_EQ(found[0].saving_bytes, 3 * kMiB);
}

// Pieces two kernels made, both held past the peak, are one problem: one
// finding with a row per producer, the most bytes first. Freed at their last
// use, they are still live together before it (7 MiB from the start): the
// peak falls from 11 MiB to that, 4 MiB, not by all their 7.
TEST_F(MemoryRules, PiecesOfSeveralProducersHeldLateAreOneFinding) {
  int64_t small = device_buffer(2 * kMiB, 0, 40 * kMs);
  int64_t large = device_buffer(5 * kMiB, 0, 45 * kMs);
  kernel("make_small", 1 * kMs, 1'000, {{small, A::Write}});
  kernel("make_large", 2 * kMs, 1'000, {{large, A::Write}});
  transient_peak();
  auto found = findings("memory_freed_late");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].saving_bytes, 4 * kMiB);
  EXPECT_NE(found[0].estimate.find("(11 MiB -> 7 MiB;"), std::string::npos) << found[0].estimate;
  EXPECT_EQ(rows_of(found[0], "allocations"), (std::vector<int64_t>{large, small}));
  ASSERT_EQ(found[0].details.rows.size(), 2u);
  EXPECT_EQ(found[0].details.rows[0][0], Cell(std::string("make_large()")));
  EXPECT_EQ(found[0].details.rows[0][4], Cell(5 * kMiB));
  EXPECT_EQ(found[0].details.rows[1][0], Cell(std::string("make_small()")));
  EXPECT_NE(found[0].what.find("2 pieces of program memory (7 MiB) from 2 producers or sites"), std::string::npos)
      << found[0].what;
}

// In a trace that records 1 op in 16, the first piece of a group may come
// from a launch no op was recorded around: the table names the op of the
// first piece that has one.
TEST_F(MemoryRules, APiecesTableNamesTheOpOfAPieceWhereOneWasRecorded) {
  int64_t first = device_buffer(2 * kMiB, 0, 40 * kMs);
  int64_t second = device_buffer(2 * kMiB, 0, 41 * kMs);
  kernel("make", 1 * kMs, 1'000, {{first, A::Write}});
  testing::FrameworkRangeRow copy;
  copy.name = "aten::copy_";
  copy.start_ns = 2 * kMs - 2'000;
  copy.end_ns = 2 * kMs;
  trace.add(copy);
  kernel("make", 2 * kMs, 1'000, {{second, A::Write}});
  transient_peak();
  auto found = findings("memory_freed_late");
  ASSERT_EQ(found.size(), 1u);
  ASSERT_EQ(found[0].details.rows.size(), 1u);
  EXPECT_EQ(found[0].details.rows[0][0], Cell(std::string("make()")));
  EXPECT_EQ(found[0].details.rows[0][2], Cell(std::string("aten::copy_")));
  EXPECT_EQ(found[0].details.rows[0][3], Cell(int64_t{2}));
}

// Alike pieces (one kernel's, of one size) made in several modules: the
// table names the modules the most pieces came from, and how many others.
TEST_F(MemoryRules, APiecesTableNamesEveryModuleItsPiecesCameFrom) {
  const char* modules[] = {"fc", "layer4", "fc", "layer3", "layer2"};
  for (int i = 0; i < 5; ++i) {
    testing::FrameworkRangeRow module;
    module.kind = FrameworkRangeKind::Module;
    module.name = modules[i];
    module.start_ns = (i + 1) * kMs - 5'000;
    module.end_ns = (i + 1) * kMs + 5'000;
    trace.add(module);
    int64_t piece = device_buffer(2 * kMiB, 0, 40 * kMs + i);
    kernel("cast", (i + 1) * kMs, 1'000, {{piece, A::Write}});
  }
  transient_peak();
  auto found = findings("memory_freed_late");
  ASSERT_EQ(found.size(), 1u);
  ASSERT_EQ(found[0].details.rows.size(), 1u);
  EXPECT_EQ(found[0].details.rows[0][1], Cell(std::string("fc (forward), layer4 (forward) and 2 other modules")));
  EXPECT_EQ(found[0].details.rows[0][3], Cell(int64_t{5}));
}

// PyTorch's autograd engine makes gradients on its own thread; zeroed after
// the next forward pass (zero_grad between forward and backward), they are
// held through its activations' peak. The fix names the optimizer's call.
TEST_F(MemoryRules, GradientsHeldThroughTheNextForwardAreToBeClearedAfterTheStep) {
  constexpr int64_t kAutogradThread = 77;
  trace.add_thread(kAutogradThread, "pt_autograd_0");
  int64_t segment = device_buffer(16 * kMiB, 0);
  int64_t gradient = trace.add_block(segment, 0, 3 * kMiB, 1 * kMs, 40 * kMs);
  trace.db().prepare("UPDATE sub_allocations SET alloc_tid = ? WHERE id = ?").bind(1, kAutogradThread).bind(2, gradient).run();
  kernel("accumulate_grad", 1 * kMs + 1'000, 1'000, {{segment, A::Write}});
  transient_peak();
  auto found = findings("memory_freed_late");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(rows_of(found[0], "sub_allocations"), std::vector<int64_t>{gradient});
  EXPECT_NE(found[0].what.find("made in the backward pass (likely gradients)"), std::string::npos) << found[0].what;
  EXPECT_NE(found[0].fix.find("optimizer.zero_grad(set_to_none=True) right after optimizer.step()"), std::string::npos)
      << found[0].fix;
}

// The same block made on the program's own thread is no gradient.
TEST_F(MemoryRules, ABlockHeldLateThatNoBackwardMadeGetsTheGeneralFix) {
  trace.add_thread(77, "pt_autograd_0");
  int64_t segment = device_buffer(16 * kMiB, 0);
  int64_t block = trace.add_block(segment, 0, 3 * kMiB, 1 * kMs, 40 * kMs);
  trace.db().prepare("UPDATE sub_allocations SET alloc_tid = 5 WHERE id = ?").bind(1, block).run();
  kernel("fill", 1 * kMs + 1'000, 1'000, {{segment, A::Write}});
  transient_peak();
  auto found = findings("memory_freed_late");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].what.find("backward"), std::string::npos) << found[0].what;
  EXPECT_EQ(found[0].fix, "free it (drop the last reference) right after its last use");
}

// The fix (a line moved in the step) frees every piece of the kind, also one
// held too briefly to be named: with only the named piece freed, the peak
// would move to the next 7 MiB moment, where a piece of the same kernel and
// size is held 0.9 ms; the saving counts both freed.
TEST_F(MemoryRules, TheSavingFreesEveryPieceOfTheKindWhereverThePeakMoves) {
  int64_t named = device_buffer(3 * kMiB, 0, 40 * kMs);
  kernel("make_gradient", 1 * kMs, 1'000, {{named, A::Write}});
  transient_peak();
  int64_t brief = device_buffer(3 * kMiB, 50 * kMs, 50 * kMs + 900'000);
  kernel("make_gradient", 50 * kMs + 1'000, 1'000, {{brief, A::Write}});
  int64_t spike = device_buffer(4 * kMiB - 64 * 1024, 50 * kMs + 500'000, 50 * kMs + 700'000);
  kernel("spike", 50 * kMs + 501'000, 1'000, {{spike, A::Write}});
  auto found = findings("memory_freed_late");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(rows_of(found[0], "allocations"), std::vector<int64_t>{named});
  EXPECT_EQ(found[0].saving_bytes, 3 * kMiB);
}

// Held through the peak, but the peak is as high later without it: freeing
// it saves nothing, and nothing is said.
TEST_F(MemoryRules, PiecesWhoseFixLeavesThePeakWhereItIsAreNoFinding) {
  int64_t late = device_buffer(3 * kMiB, 0, 40 * kMs);
  kernel("last_touch", 2 * kMs, 1'000, {{late, A::Write}});
  transient_peak();
  int64_t later = device_buffer(7 * kMiB, 50 * kMs, 60 * kMs);
  kernel("spike", 50 * kMs + 1'000, 1'000, {{later, A::Write}});
  EXPECT_TRUE(findings("memory_freed_late").empty());
}

// Never freed, it is held from its last use to the end of the trace.
TEST_F(MemoryRules, MemoryNeverFreedIsHeldToTheTracesEnd) {
  int64_t kept = device_buffer(3 * kMiB, 0);
  kernel("last_touch", 2 * kMs, 1'000, {{kept, A::Write}});
  transient_peak();
  kernel("later", 60 * kMs, 1'000, {{sink(), A::Write}});
  auto found = findings("memory_freed_late");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_NE(found[0].what.find("held up to 58"), std::string::npos) << found[0].what;
}

TEST_F(MemoryRules, AnAllocatorsCacheAtThePeak) {
  int64_t segment = device_buffer(8 * kMiB, 0);
  trace.add_block(segment, 0, kMiB, 100);
  kernel("fill", 5 * kMs, 1'000, {{segment, A::Write}});
  auto found = findings("memory_cached_at_peak");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].saving_bytes, 7 * kMiB);
  EXPECT_EQ(rows_of(found[0], "allocations"), std::vector<int64_t>{segment});
}

TEST_F(MemoryRules, ACacheSmallNextToThePeakIsNoFinding) {
  int64_t segment = device_buffer(8 * kMiB, 0);
  trace.add_block(segment, 0, 8 * kMiB - 4096, 100);
  kernel("fill", 5 * kMs, 1'000, {{segment, A::Write}});
  EXPECT_TRUE(findings("memory_cached_at_peak").empty());
}

// The fixture's GPU has 80 GiB: a peak of 8 MiB leaves it nearly all, and
// the 7 MiB cached there are not needed now. On a GPU of 12 MiB the peak is
// two thirds of it: the cache is a finding like any.
TEST_F(MemoryRules, BytesSavedOnAGpuWithRoomToSpareAreMinor) {
  int64_t segment = device_buffer(8 * kMiB, 0);
  trace.add_block(segment, 0, kMiB, 100);
  kernel("fill", 5 * kMs, 1'000, {{segment, A::Write}});
  auto roomy = findings("memory_cached_at_peak");
  ASSERT_EQ(roomy.size(), 1u);
  EXPECT_TRUE(roomy[0].minor);
  EXPECT_NE(roomy[0].estimate.find("GPU 0's peak, 8 MiB, is 0% of its 80 GiB: the memory saved is not needed now"),
            std::string::npos)
      << roomy[0].estimate;
  trace.db().prepare("UPDATE devices SET total_memory_bytes = ?").bind(1, 12 * kMiB).run();
  auto tight = findings("memory_cached_at_peak");
  ASSERT_EQ(tight.size(), 1u);
  EXPECT_FALSE(tight[0].minor);
  EXPECT_EQ(tight[0].saving_bytes, 7 * kMiB);
}

// Six NVTX steps of 10 ms; each keeps a 1 MiB block "keep" wrote and frees a
// temporary.
TEST_F(MemoryRules, LiveMemoryGrowingEveryStepIsALeakWithItsProducer) {
  int64_t segment = device_buffer(16 * kMiB, 0);
  for (int s = 1; s <= 6; ++s) {
    int64_t start = s * 10 * kMs;
    testing::NvtxRangeRow step;
    step.name = "step " + std::to_string(s);
    step.start_ns = start;
    step.end_ns = start + 10 * kMs - 1;
    trace.add(step);
    trace.add_block(segment, 8 * kMiB, 2 * kMiB, start + 100, start + 3 * kMs);
    kernel("temp", start + kMs, 1'000, {{segment, A::Write, 8 * kMiB}});
    trace.add_block(segment, s * kMiB, kMiB, start + 4 * kMs);
    kernel("keep", start + 5 * kMs, 1'000, {{segment, A::Write, s * kMiB}});
  }
  auto found = findings("memory_leak");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].names, std::vector<std::string>{"keep()"});
  EXPECT_EQ(rows_of(found[0], "sub_allocations").size(), 5u);  // after the first step
  // The peak (the most live) is step 6's temporary: steps 2-5's kept blocks are live then.
  EXPECT_EQ(found[0].saving_bytes, 4 * kMiB);
  EXPECT_NE(found[0].what.find(": 1 MiB a step is made and kept (5 blocks in all)"), std::string::npos)
      << found[0].what;
  EXPECT_FALSE(found[0].minor) << found[0].estimate;
}

TEST_F(MemoryRules, MemoryFreedEveryStepIsNoLeak) {
  int64_t segment = device_buffer(16 * kMiB, 0);
  for (int s = 1; s <= 6; ++s) {
    int64_t start = s * 10 * kMs;
    testing::NvtxRangeRow step;
    step.name = "step " + std::to_string(s);
    step.start_ns = start;
    step.end_ns = start + 10 * kMs - 1;
    trace.add(step);
    trace.add_block(segment, kMiB, kMiB, start + 4 * kMs, start + 8 * kMs);
    kernel("keep", start + 5 * kMs, 1'000, {{segment, A::Write, kMiB}});
  }
  EXPECT_TRUE(findings("memory_leak").empty());
}

// Memory findings cost no time: after those that do, the most bytes first.
TEST_F(MemoryRules, MemoryFindingsRankByBytesAfterTimeFindings) {
  device_buffer(kMiB, 0);
  int64_t late = device_buffer(3 * kMiB, 0, 40 * kMs);
  kernel("last_touch", 2 * kMs, 1'000, {{late, A::Write}});
  int64_t early = device_buffer(2 * kMiB, 0);
  transient_peak();
  kernel("first_touch", 50 * kMs, 1'000, {{early, A::Write}});
  std::vector<std::pair<std::string, int64_t>> bytes;
  for (const Finding& f : all_findings()) {
    if (f.saving_bytes) bytes.emplace_back(f.rule, *f.saving_bytes);
  }
  EXPECT_EQ(bytes, (std::vector<std::pair<std::string, int64_t>>{
                       {"memory_freed_late", 3 * kMiB}, {"memory_allocated_early", 2 * kMiB}, {"memory_never_used", kMiB}}));
}

}  // namespace
}  // namespace apptracer::diagnose
