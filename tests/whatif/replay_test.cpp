// Replays worked out by hand. Each trace's recorded times are chosen so the
// prediction follows from the rules in timeline.h and recorded.h:
//   an op starts at max(issue + its launch latency, its dependency's end +
//   its gap), takes its (modeled) duration; a call starts its recorded host
//   gap after the previous one, and a blocking one ends its recorded tail
//   after the work it waited for.
// Systems have constant bandwidths and no latency: a copy of B bytes over a
// G GB/s path takes B / G ns.
#include <gtest/gtest.h>

#include "whatif_fixture.h"

namespace apptracer::whatif {
namespace {

const Phase& phase_named(const WhatifResult& result, const std::string& name) {
  for (const Phase& phase : result.phases) {
    if (phase.name == name) return phase;
  }
  throw std::runtime_error("no phase " + name);
}

// Copy -> kernel -> copy on one stream, then a device synchronization.
class Chain : public WhatifTest {
 public:
  void SetUp() override {
    WhatifTest::SetUp();
    Copy htod{CopyKind::HtoD, MemoryKind::Pinned, 1000};
    copy(call("cudaMemcpyAsync", 100, 110), htod, 100, 120, 1120);
    kernel(call("cudaLaunchKernel", 130, 140), 130, 1125, 2125);
    Copy dtoh{CopyKind::DtoH, MemoryKind::Pinned, 2000};
    copy(call("cudaMemcpyAsync", 150, 160), dtoh, 150, 2130, 4130);
    sync(call("cudaDeviceSynchronize", 170, 4140), SyncKind::Device, 170, 4140);
  }
};

TEST_F(Chain, ReplayedWithTheRecordedTimesItIsTheRecording) {
  write_system({"DtoD.gpu0 0 1"});  // prices none of these copies
  WhatifResult result = run();
  EXPECT_EQ(result.recorded_ns, 4040);
  EXPECT_EQ(result.baseline_ns, 4040);
  EXPECT_EQ(result.predicted_ns, 4040);
}

TEST_F(Chain, CopiesAreRetimedAndEverythingAfterThemMoves) {
  write_system({"HtoD.pinned.node0.gpu0 0 2", "DtoH.pinned.node0.gpu0 0 2"});
  WhatifResult result = run();
  // copy 1: issued at 100, its recorded launch latency 20 -> [120, 620]
  // kernel: held by copy 1 in the recording (gap 5) -> [625, 1625]
  // copy 2: gap 5 -> [1630, 2630]; the sync returns its tail of 10 later.
  EXPECT_EQ(result.baseline_ns, 2640 - 100);
  EXPECT_EQ(result.predicted_ns, result.baseline_ns);
  ASSERT_EQ(result.transfers.size(), 2u);
  EXPECT_EQ(result.transfers[0].path, "HtoD.pinned.node0.gpu0");
  EXPECT_EQ(result.transfers[0].recorded_ns, 1000);
  EXPECT_EQ(result.transfers[0].baseline_ns, 500);
  EXPECT_EQ(result.transfers[1].baseline_by, "DtoH.pinned.node0.gpu0");
  EXPECT_EQ(result.transfers[1].baseline_ns, 1000);
}

TEST_F(Chain, TheCriticalPathIsTheChainAndAddsUpToTheTotal) {
  write_system({"HtoD.pinned.node0.gpu0 0 2", "DtoH.pinned.node0.gpu0 0 2"});
  WhatifResult result = run();
  const std::vector<PathStep>& steps = result.critical_path.steps;
  std::vector<std::string> kinds;
  int64_t sum = 0;
  for (const PathStep& step : steps) {
    kinds.push_back(step.kind);
    sum += step.wait_ns + step.own_ns;
  }
  EXPECT_EQ(kinds, (std::vector<std::string>{"call", "copy", "kernel", "copy", "call"}));
  EXPECT_EQ(sum, result.predicted_ns);
  EXPECT_EQ(steps[1].wait_ns, 20);  // launch latency
  EXPECT_EQ(steps[1].own_ns, 500);
  EXPECT_EQ(steps[1].bound_by, DepReason::Issue);
  EXPECT_EQ(steps[2].bound_by, DepReason::Stream);
  EXPECT_EQ(steps[2].wait_ns, 5);
  EXPECT_EQ(steps[3].name, "DtoH.pinned.node0.gpu0");
  EXPECT_EQ(steps[4].name, "cudaDeviceSynchronize");
  EXPECT_EQ(steps[4].bound_by, DepReason::Wait);
  EXPECT_EQ(steps[4].own_ns, 10);  // the synchronization's tail
  ASSERT_FALSE(result.critical_path.by_kind.empty());
  EXPECT_EQ(result.critical_path.by_kind[0].kind, "copy");
  EXPECT_EQ(result.critical_path.by_kind[0].own_ns, 1500);
}

TEST_F(WhatifTest, AnEventJoinsTwoStreams) {
  write_system({"HtoD.pinned.node0.gpu0 0 2"});
  Copy htod{CopyKind::HtoD, MemoryKind::Pinned, 2000, true, 1};
  copy(call("cudaMemcpyAsync", 100, 105), htod, 100, 110, 2110);
  event(call("cudaEventRecord", 120, 125), StreamEventKind::Record, 42, 1, 120);
  event(call("cudaStreamWaitEvent", 130, 135), StreamEventKind::Wait, 42, 2, 130);
  kernel(call("cudaLaunchKernel", 140, 145), 140, 2120, 3120, 2);
  sync(call("cudaDeviceSynchronize", 150, 3130), SyncKind::Device, 150, 3130);
  WhatifResult result = run();
  EXPECT_EQ(result.recorded_ns, 3030);
  // The copy: [110, 1110]; the record and the wait are reached at 1110; the
  // kernel on stream 2 follows 10 later (its recorded gap): [1120, 2120].
  EXPECT_EQ(result.baseline_ns, 2130 - 100);
}

// A launch, a stream synchronization, 100 ns of host work, a launch and a
// synchronization: doubling the kernels moves the host after the first sync.
class HostGaps : public WhatifTest {
 public:
  void SetUp() override {
    WhatifTest::SetUp();
    write_system({"DtoD.gpu0 0 1"});
    kernel(call("cudaLaunchKernel", 0, 10), 0, 20, 1020);
    sync(call("cudaStreamSynchronize", 20, 1030), SyncKind::Stream, 20, 1030, 7);
    kernel(call("cudaLaunchKernel", 1130, 1140), 1130, 1150, 1650);
    sync(call("cudaStreamSynchronize", 1150, 1660), SyncKind::Stream, 1150, 1660, 7);
  }
};

TEST_F(HostGaps, ASyncBlocksTheHostAndHostTimeIsKept) {
  WhatifOptions options;
  options.kernel_scale = 2;
  WhatifResult result = run(options);
  EXPECT_EQ(result.recorded_ns, 1660);
  EXPECT_EQ(result.baseline_ns, 1660);
  // kernel 1: [20, 2020]; the sync returns at 2030; 100 ns of host work;
  // the launch [2130, 2140]; kernel 2 [2150, 3150]; the sync returns at 3160.
  EXPECT_EQ(result.predicted_ns, 3160);
  EXPECT_EQ(result.changes, (std::vector<std::string>{"--kernel-scale 2"}));
}

TEST_F(HostGaps, PeriodsEndAtTheFirstThreadsSynchronizations) {
  WhatifOptions options;
  options.kernel_scale = 2;
  WhatifResult result = run(options);
  ASSERT_EQ(result.phases.size(), 3u);
  const Phase& first = phase_named(result, "period 1");
  EXPECT_EQ(first.detail, "until cudaStreamSynchronize");
  EXPECT_EQ(first.ns, (std::vector<int64_t>{1030, 1030, 2030}));
  EXPECT_EQ(phase_named(result, "period 2").ns, (std::vector<int64_t>{630, 630, 1130}));
  EXPECT_EQ(phase_named(result, "period 3").detail, "until the end");
  EXPECT_EQ(phase_named(result, "period 3").ns, (std::vector<int64_t>{0, 0, 0}));
}

TEST_F(HostGaps, NvtxRangesMoveWithTheCallsAroundThem) {
  testing::NvtxRangeRow range;
  range.name = "step";
  range.start_ns = 5;     // inside the first launch
  range.end_ns = 1100;    // 70 ns after the first sync returned
  trace_->add(range);
  WhatifOptions options;
  options.kernel_scale = 2;
  WhatifResult result = run(options);
  ASSERT_EQ(result.phases.size(), 2u);
  // The range is the program's one step: the steady steps are it, first.
  EXPECT_EQ(result.phases[0].kind, "steps");
  EXPECT_EQ(result.phases[0].count, 1);
  EXPECT_EQ(result.phases[1].kind, "nvtx");
  EXPECT_EQ(result.phases[1].ns, (std::vector<int64_t>{1095, 1095, 2100 - 5}));
  EXPECT_EQ(result.phases[0].ns, result.phases[1].ns);
}

// XLA's ranges (a thunk's, a compiler pass's) are the framework's, one per
// op: not phases of the program, whose own range stays one.
TEST_F(HostGaps, XlasOwnRangesAreNoPhases) {
  for (const char* name : {"Thunk:#hlo_op=loop_add_fusion#", "XlaCompile:#module=jit_step#",
                           "XlaPass:#name=dce,module=jit_step#", "train"}) {
    testing::NvtxRangeRow range;
    range.name = name;
    range.start_ns = 5;
    range.end_ns = 1100;
    trace_->add(range);
  }
  WhatifOptions options;
  options.kernel_scale = 2;
  std::vector<std::string> names;
  for (const Phase& phase : run(options).phases) names.push_back(phase.name);
  EXPECT_EQ(names, std::vector<std::string>{"train"});
}

TEST_F(HostGaps, TheCriticalPathCountsHostTimeBetweenCalls) {
  WhatifOptions options;
  options.kernel_scale = 2;
  WhatifResult result = run(options);
  int64_t host_wait = 0, kernel_own = 0;
  for (const CriticalPath::Share& share : result.critical_path.by_kind) {
    if (share.kind == "call") host_wait = share.wait_ns;
    if (share.kind == "kernel") kernel_own = share.own_ns;
  }
  EXPECT_EQ(host_wait, 100);
  EXPECT_EQ(kernel_own, 3000);
}

// A synchronous cudaMemcpy from pageable memory, a launch, a synchronization.
// The copy took 10000 ns, as its path's model says: 5 before its DMA, the
// DMA's 9900, and 95 in the call after it.
class Pageable : public WhatifTest {
 public:
  void build(bool async) {
    write_system({"HtoD.pageable.node0.gpu0 0 1", "HtoD.pinned.node0.gpu0 0 2"});
    Copy htod{CopyKind::HtoD, MemoryKind::Pageable, 10000, async};
    copy(call(async ? "cudaMemcpyAsync" : "cudaMemcpy", 0, 10000), htod, 0, 5, 9905);
    kernel(call("cudaLaunchKernel", 10010, 10020), 10010, 10015, 11015);
    sync(call("cudaDeviceSynchronize", 10020, 11025), SyncKind::Device, 10020, 11025);
  }
};

TEST_F(Pageable, PinningHalvesTheCopyAndTheHostWaitsLess) {
  build(false);
  WhatifOptions options;
  options.pin = true;
  WhatifResult result = run(options);
  EXPECT_EQ(result.recorded_ns, 11025);
  EXPECT_EQ(result.baseline_ns, 11025);  // the pageable path's model is what was recorded
  ASSERT_EQ(result.transfers.size(), 1u);
  EXPECT_EQ(result.transfers[0].path, "HtoD.pageable.node0.gpu0");
  EXPECT_EQ(result.transfers[0].whatif_path, "HtoD.pinned.node0.gpu0");
  EXPECT_EQ(result.transfers[0].baseline_ns, 9900);  // its DMA; the staging is in the call
  EXPECT_EQ(result.transfers[0].predicted_ns, 5000);
  // The copy [5, 5005]; cudaMemcpy still blocks and returns the trace's
  // typical tail (10) later: 5015, no longer staging (the 95 ns it spent
  // after the DMA); the launch at 5025, the kernel [5030, 6030], the sync
  // returns at 6040.
  EXPECT_EQ(result.predicted_ns, 6040);
}

TEST_F(Pageable, PinningMakesAnAsyncCopyStopBlockingTheHost) {
  build(true);
  WhatifOptions options;
  options.pin = true;
  WhatifResult result = run(options);
  // cudaMemcpyAsync returns after the trace's typical call time (10); the
  // launch [20, 30]; the kernel follows the copy [5, 5005]: [5005, 6005];
  // the sync (issued at 30) returns at 6015.
  EXPECT_EQ(result.predicted_ns, 6015);
}

TEST_F(Pageable, AnotherNumaNodeIsPricedByItsPath) {
  build(false);
  write_system({"HtoD.pageable.node0.gpu0 0 1", "HtoD.pageable.node1.gpu0 0 0.5"});
  WhatifOptions options;
  options.numa_node = 1;
  WhatifResult result = run(options);
  EXPECT_EQ(result.transfers[0].whatif_by, "HtoD.pageable.node1.gpu0");
  EXPECT_EQ(result.transfers[0].predicted_ns, 2 * 9900);  // each part of the copy twice as long
  EXPECT_EQ(result.predicted_ns, 11025 + 10000);
}

TEST_F(Pageable, ALinkChangeAndAnotherMachineReplaceTheModel) {
  build(false);
  WhatifOptions options;
  options.links = {"HtoD.pageable=bw:4,lat:1"};
  WhatifResult changed = run(options);
  EXPECT_EQ(changed.transfers[0].predicted_ns, 3465);  // the DMA's share of 1000 + 2500
  EXPECT_EQ(changed.predicted_ns, 11025 - 10000 + 3500);
  std::string other = base_ + "_other.json";
  write_system({"HtoD.pageable.node0.gpu0 0 4"}, other, "NVIDIA H200");
  WhatifOptions machine;
  machine.system2_path = other;
  WhatifResult result = run(machine);
  std::remove(other.c_str());
  EXPECT_EQ(result.transfers[0].predicted_ns, 2475);
  EXPECT_EQ(result.predicted_ns, 11025 - 7500);
  EXPECT_NE(result.system2.find("NVIDIA H200"), std::string::npos);
}

// `links` times a pageable copy as the GPU sees it, which misses much of
// what staging costs a program: the copy replays as recorded (10000 ns
// where the path's model says 2500), and a change scales each recorded part
// by what the model says it changes.
TEST_F(Pageable, AStagedCopyReplaysAsRecordedWhereItsModelDiffers) {
  build(false);
  write_system({"HtoD.pageable.node0.gpu0 0 4", "HtoD.pinned.node0.gpu0 0 8"});
  WhatifResult result = run();
  EXPECT_EQ(result.baseline_ns, result.recorded_ns);
  EXPECT_EQ(result.transfers[0].baseline_ns, 9900);
  WhatifOptions slower;
  slower.links = {"HtoD.pageable=bw:2"};  // 5000 ns: twice the model's time, so twice each part
  EXPECT_EQ(run(slower).predicted_ns, 11025 + 10000);
  // Pinned, 1250 ns: [5, 1255], the call returns the typical tail (10)
  // later; the launch at 1275, the kernel [1280, 2280], the sync at 2290.
  WhatifOptions pin;
  pin.pin = true;
  EXPECT_EQ(run(pin).predicted_ns, 2290);
}

// The copy ran faster (10000 ns) than its pageable path's model (20000 ns):
// the machine is faster than its system file, and so is the pinned copy, by
// the same ratio (12500 -> 6250 ns): pinning a copy the model prices faster
// pinned never predicts it slower than recorded.
TEST_F(Pageable, PinningACopyTheModelPricesFasterPinnedIsNeverSlower) {
  build(false);
  write_system({"HtoD.pageable.node0.gpu0 0 0.5", "HtoD.pinned.node0.gpu0 0 0.8"});
  WhatifOptions pin;
  pin.pin = true;
  WhatifResult result = run(pin);
  EXPECT_EQ(result.baseline_ns, result.recorded_ns);
  EXPECT_EQ(result.transfers[0].predicted_ns, 6250);
  EXPECT_EQ(result.predicted_ns, 6250 + 1040);
}

// A pageable copy issued while a kernel ran on its stream: the stream held
// it until 20100, its staging 5900 ns more (its gap), its DMA 4000 ns; its
// call returned 1000 ns before the DMA ended. Replayed as recorded; pinned,
// it starts when the kernel ends (the trace's typical gap: 5), not after
// its staging.
TEST_F(WhatifTest, APinnedCopyNoLongerWaitsForTheStagingThatHeldItOnItsStream) {
  write_system({"HtoD.pageable.node0.gpu0 0 2", "HtoD.pinned.node0.gpu0 0 4"});
  kernel(call("cudaLaunchKernel", 0, 50), 0, 100, 20100);
  copy(call("cudaMemcpyAsync", 60, 29000), Copy{CopyKind::HtoD, MemoryKind::Pageable, 4000}, 60, 26000, 30000);
  kernel(call("cudaLaunchKernel", 29010, 29020), 29010, 30005, 31005);
  sync(call("cudaDeviceSynchronize", 29030, 31015), SyncKind::Device, 29030, 31015);
  WhatifResult baseline = run();
  EXPECT_EQ(baseline.recorded_ns, 31015);
  EXPECT_EQ(baseline.baseline_ns, 31015);
  // Pinned: the copy [20105, 21105]; its call returns after the trace's
  // typical call (50): 110; the launch [120, 130]; the kernel [21110,
  // 22110]; the sync (from 140) returns its recorded tail (10) after it.
  WhatifOptions pin;
  pin.pin = true;
  WhatifResult pinned = run(pin);
  EXPECT_EQ(pinned.transfers[0].predicted_ns, 1000);
  EXPECT_EQ(pinned.predicted_ns, 22120);
}

// A tiled pipeline from and to pageable memory on one stream, three tiles:
// HtoD (staged 3000 ns before its DMA, returning 200 ns before it ends), a
// kernel, DtoH (its call copies out of the staging buffer 1600 ns after the
// DMA), recorded about four times slower than the paths' models say: the
// baseline is the recording.
TEST_F(WhatifTest, APageablePipelinesBaselineIsItsRecording) {
  write_system({"HtoD.pageable.node0.gpu0 0 4", "DtoH.pageable.node0.gpu0 0 4", "HtoD.pinned.node0.gpu0 0 8",
                "DtoH.pinned.node0.gpu0 0 8"});
  for (int64_t base = 0; base < 30000; base += 10000) {
    copy(call("cudaMemcpyAsync", base, base + 4000), Copy{CopyKind::HtoD, MemoryKind::Pageable, 4096}, base,
         base + 3000, base + 4200);
    kernel(call("cudaLaunchKernel", base + 4300, base + 4310), base + 4300, base + 4315, base + 6315);
    copy(call("cudaMemcpyAsync", base + 6320, base + 9000), Copy{CopyKind::DtoH, MemoryKind::Pageable, 4096},
         base + 6320, base + 6400, base + 7400);
  }
  sync(call("cudaDeviceSynchronize", 29010, 29020), SyncKind::Device, 29010, 29020);
  WhatifResult result = run();
  EXPECT_EQ(result.recorded_ns, 29020);
  EXPECT_EQ(result.baseline_ns, result.recorded_ns);
  for (const TransferSummary& row : result.transfers) EXPECT_EQ(row.baseline_ns, row.recorded_ns) << row.path;
}

// A small pageable copy spends most of its time staging in its call (HtoD:
// before the DMA; DtoH: after it, copying out of the staging buffer), which
// the path's model includes: the model's time is split as recorded, not
// added to the recorded staging.
TEST_F(WhatifTest, AStagedCopysModelTimeIsSplitBetweenItsStagingAndItsDma) {
  write_system({"HtoD.pageable.node0.gpu0 0 1", "DtoH.pageable.node0.gpu0 0 1", "HtoD.pinned.node0.gpu0 0 5",
                "DtoH.pinned.node0.gpu0 0 5"});
  copy(call("cudaMemcpy", 0, 5000), Copy{CopyKind::HtoD, MemoryKind::Pageable, 5000, false}, 0, 4000, 5000);
  copy(call("cudaMemcpy", 5010, 10010), Copy{CopyKind::DtoH, MemoryKind::Pageable, 5000, false}, 5010, 5020,
       6020);
  kernel(call("cudaLaunchKernel", 10020, 10030), 10020, 10025, 11025);
  sync(call("cudaDeviceSynchronize", 10030, 11035), SyncKind::Device, 10030, 11035);
  WhatifResult result = run();
  EXPECT_EQ(result.recorded_ns, 11035);
  EXPECT_EQ(result.baseline_ns, 11035);
  ASSERT_EQ(result.transfers.size(), 2u);
  EXPECT_EQ(result.transfers[0].baseline_ns, 1000);
  EXPECT_EQ(result.transfers[1].baseline_ns, 1000);

  WhatifOptions slower;
  slower.links = {"HtoD.pageable=bw:0.5", "DtoH.pageable=bw:0.5"};
  EXPECT_EQ(run(slower).predicted_ns, 21035);  // each part of each copy twice as long

  // Pinned, each copy takes 1000 ns after the trace's launch latency (5),
  // and its call returns the typical tail (10) after it, no longer staging:
  // HtoD [5, 1005], its call ends at 1015; DtoH [1030, 2030], its call ends
  // at 2040; the kernel [2055, 3055]; the sync returns at 3065.
  WhatifOptions pin;
  pin.pin = true;
  WhatifResult pinned = run(pin);
  EXPECT_EQ(pinned.transfers[1].predicted_ns, 1000);
  EXPECT_EQ(pinned.predicted_ns, 3065);
}

// A copy into pageable memory nothing had touched paid the first touch of
// its pages: priced by the fresh path where the system file measured one,
// else by the pageable path, said in a note; pinned, it pays none.
TEST_F(WhatifTest, ACopyIntoUntouchedPageableMemoryIsPricedByTheFreshPath) {
  write_system({"DtoH.pageable.node0.gpu0 0 4", "DtoH.fresh.node0.gpu0 0 1", "DtoH.pinned.node0.gpu0 0 8"});
  Copy dtoh{CopyKind::DtoH, MemoryKind::Pageable, 8000, false};
  dtoh.untouched_pages = 16;
  copy(call("cudaMemcpy", 0, 8000), dtoh, 0, 0, 8000);
  WhatifResult result = run();
  ASSERT_EQ(result.transfers.size(), 1u);
  EXPECT_EQ(result.transfers[0].baseline_by, "DtoH.fresh.node0.gpu0");
  EXPECT_EQ(result.transfers[0].baseline_ns, 8000);
  WhatifOptions pin;
  pin.pin = true;
  EXPECT_EQ(run(pin).transfers[0].predicted_ns, 1000);
  // Without a fresh path, the pageable one stands for it: as recorded with
  // nothing changed, twice as long where that path is made twice as slow.
  write_system({"DtoH.pageable.node0.gpu0 0 4"});
  WhatifOptions slower;
  slower.links = {"DtoH.pageable=bw:2"};
  result = run(slower);
  EXPECT_EQ(result.transfers[0].baseline_ns, 8000);
  EXPECT_EQ(result.transfers[0].predicted_ns, 16000);
  bool noted = false;
  for (const std::string& note : result.notes) {
    noted |= note.find("DtoH.fresh.node0.gpu0 was not measured: priced as DtoH.pageable.node0.gpu0") !=
             std::string::npos;
  }
  EXPECT_TRUE(noted);
}

// A kernel that faulted 4 MiB of managed memory in: prefetched before it, it
// loses the fault path's time for those bytes and the prefetch's is added
// (in stream order, before it); without those paths, it stays as recorded.
TEST_F(WhatifTest, PrefetchingManagedMemoryReplacesAKernelsFaultsByAPrefetch) {
  constexpr int64_t kBytes = 4 << 20;
  write_system({"fault.HtoD.gpu0 0 1", "prefetch.HtoD.gpu0 0 4"});
  testing::AllocationRow managed;
  managed.kind = AllocKind::Managed;
  managed.address = 0x7e0000000000;
  managed.bytes = kBytes;
  managed.alloc_ns = 1;
  int64_t alloc = trace_->add(managed);
  kernel(call("cudaLaunchKernel", 0, 10), 0, 20, 20 + 2 * kBytes);
  testing::UmEventRow moved;
  moved.address = managed.address;
  moved.bytes = moved.value = kBytes;
  moved.alloc_id = alloc;
  moved.alloc_offset = 0;
  moved.dst_device = 0;
  moved.start_ns = 100;
  moved.end_ns = 200;
  moved.cause = static_cast<int64_t>(UmMigrationCause::Coherence);  // a page fault
  trace_->add(moved);
  sync(call("cudaDeviceSynchronize", 20, 30 + 2 * kBytes), SyncKind::Device, 20, 30 + 2 * kBytes);
  WhatifOptions options;
  options.prefetch_managed = true;
  WhatifResult result = run(options);
  // The kernel [20, 20 + 2 * kBytes] becomes kBytes (its faults at 1 B/ns
  // gone) + kBytes / 4 (the prefetch at 4 B/ns).
  EXPECT_EQ(result.recorded_ns - result.predicted_ns, kBytes - kBytes / 4);
  ASSERT_FALSE(result.notes.empty());
  EXPECT_EQ(result.notes.front(), "--prefetch-managed: 1 kernel(s) had their on-demand migrations (4 MiB) "
                                  "prefetched before them");
  write_system({"DtoD.gpu0 0 1"});
  result = run(options);
  EXPECT_EQ(result.predicted_ns, result.recorded_ns);
  EXPECT_EQ(result.notes.front(), "--prefetch-managed: 1 kernel(s) kept as recorded: " + system_path_ +
                                      " has no fault.HtoD or prefetch.HtoD path for their GPU");
}

TEST_F(WhatifTest, CopiesNoPathModelsKeepTheirRecordedTimeAndSaySo) {
  write_system({"DtoD.gpu0 0 1"});
  Copy htod{CopyKind::HtoD, MemoryKind::Pinned, 1000};
  copy(call("cudaMemcpyAsync", 0, 10), htod, 0, 10, 1010);
  WhatifResult result = run();
  EXPECT_EQ(result.baseline_ns, 1010);
  ASSERT_FALSE(result.notes.empty());
  EXPECT_EQ(result.notes.back(), "baseline: 1 copy keeps its recorded time: " + system_path_ +
                                     " models no path for HtoD.pinned.node0.gpu0");
}

TEST_F(WhatifTest, ATraceFromAnotherGpuIsNoted) {
  write_system({"DtoD.gpu0 0 1"}, "", "NVIDIA B200");
  kernel(call("cudaLaunchKernel", 0, 10), 0, 20, 1020);
  WhatifResult result = run();
  bool noted = false;
  for (const std::string& note : result.notes) noted |= note.find("recorded on NVIDIA H100") != std::string::npos;
  EXPECT_TRUE(noted);
}

}  // namespace
}  // namespace apptracer::whatif
