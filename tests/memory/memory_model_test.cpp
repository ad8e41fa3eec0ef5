// The memory view (analyzer/memory): each device's memory in use by owner,
// its peak and the live set then, each piece's first and last use and
// producer, each step's memory, and the what-if peaks.
#include "memory_fixture.h"

#include "analyzer/memory/memory_whatif.h"
#include "analyzer/memory/producers.h"

namespace apptracer::memory {
namespace {

using A = AccessKind;
using Kind = MemoryItem::Kind;

// GPU 0: an allocation A (1000 B), a PyTorch segment S (4096 B) with blocks
// B1 (1024 B, never used) and B2 (2048 B, written by "produce", read by
// "consume"), and a short allocation C (500 B) that "consume" writes; a
// pinned host buffer H (512 B). A and C lie outside the framework's blocks
// in a process whose data it holds: a library's workspaces.
class PeakOfOneDevice : public MemoryTest {
 protected:
  void SetUp() override {
    host = allocation(AllocKind::PinnedHost, 512, 0);
    a = allocation(AllocKind::Device, 1000, 1000, 9000);
    segment = allocation(AllocKind::Device, 4096, 2000);
    b1 = block(segment, 0, 1024, 3000, 8000, 8000);
    b2 = block(segment, 1024, 2048, 4000, 7000, 7500);
    c = allocation(AllocKind::Device, 500, 5000, 6000);
    kernel("produce", 4500, 100, {{segment, A::Write, 1024}});
    kernel("consume", 5100, 100, {{segment, A::Read, 1024}, {c, A::Write}});
  }
  int64_t host = 0, a = 0, segment = 0, b1 = 0, b2 = 0, c = 0;
};

TEST_F(PeakOfOneDevice, ThePeakIsWhenTheMostIsInUseAndItsOwnersAddUpToIt) {
  trace::Trace opened(trace.db());
  MemoryModel built = model(opened);
  const DeviceMemory& gpu = device(built, 0);
  EXPECT_EQ(gpu.peak_bytes, 1000 + 4096 + 500);
  ASSERT_EQ(gpu.peak_ns, std::vector<int64_t>{5000});
  EXPECT_EQ(owner_bytes(gpu, Owner::Library), 1500);
  EXPECT_EQ(owner_bytes(gpu, Owner::FrameworkTensors), 1024 + 2048);
  EXPECT_EQ(owner_bytes(gpu, Owner::FrameworkCache), 4096 - 1024 - 2048);
  int64_t live_sum = 0;
  for (const LiveItem& live : gpu.live_at_peak) live_sum += live.bytes;
  EXPECT_EQ(live_sum, gpu.peak_bytes);
  EXPECT_EQ(gpu.peak_live_bytes, gpu.peak_bytes - 1024);
  const DeviceMemory& pinned = device(built, std::nullopt);
  EXPECT_EQ(pinned.peak_bytes, 512);
  EXPECT_EQ(owner_bytes(pinned, Owner::PinnedHost), 512);
}

// torch.cuda.memory_allocated() drops when the program releases a tensor,
// before the allocator gets it back: from then on it is cache.
TEST_F(PeakOfOneDevice, ABlockReleasedByTheProgramIsCacheUntilReused) {
  trace::Trace opened(trace.db());
  MemoryModel built = model(opened);
  const DeviceMemory& gpu = device(built, 0);
  MemoryPoint after_release = state_at(gpu.points, 7000, true);
  EXPECT_EQ(after_release.in_use, 1000 + 4096);
  EXPECT_EQ(after_release.reserved, 4096);
  EXPECT_EQ(after_release.framework, 1024);
  EXPECT_EQ(after_release.cached, 4096 - 1024);
}

TEST_F(PeakOfOneDevice, UsesAndProducerComeFromTheOpsThatTouchedEachPiece) {
  trace::Trace opened(trace.db());
  MemoryModel built = model(opened);
  const MemoryItem& written = item(built, Kind::Block, b2);
  EXPECT_EQ(written.first_use_ns, 4600);
  EXPECT_EQ(written.last_use_ns, 5200 + 100);
  ASSERT_NE(written.producer, kNoOp);
  Producers producers(opened);
  EXPECT_EQ(producers.of(graph, written.producer).name, "produce()");
  EXPECT_FALSE(item(built, Kind::Block, b1).first_use_ns);
  EXPECT_FALSE(item(built, Kind::Allocation, a).first_use_ns);
  EXPECT_EQ(item(built, Kind::Allocation, segment).owner, Owner::FrameworkCache);
}

// stats --report memory and the timeline build the model from the accesses
// the graph is built from: it must be the model the graph gives, each
// producer the same operation (its position differs: the graph's ops are in
// program order).
TEST_F(PeakOfOneDevice, TheAccessesGiveTheModelTheGraphGives) {
  kernel("rewrite", 5100, 100, {{segment, A::Write, 1024}});  // starts with "consume"
  trace::Trace opened(trace.db());
  MemoryModel from_graph = model(opened);
  dvdg::OpAccesses accesses = dvdg::find_op_accesses(opened);
  MemoryModel from_accesses = build_memory_model(opened, accesses);
  EXPECT_TRUE(accesses.accesses.empty());  // released once read
  ASSERT_EQ(from_accesses.items.size(), from_graph.items.size());
  for (size_t i = 0; i < from_graph.items.size(); ++i) {
    const MemoryItem& g = from_graph.items[i];
    const MemoryItem& a = from_accesses.items[i];
    SCOPED_TRACE(g.id);
    EXPECT_EQ(a.id, g.id);
    EXPECT_EQ(a.owner, g.owner);
    EXPECT_EQ(a.first_use_ns, g.first_use_ns);
    EXPECT_EQ(a.last_use_ns, g.last_use_ns);
    ASSERT_EQ(a.producer == kNoOp, g.producer == kNoOp);
    if (g.producer == kNoOp) continue;
    EXPECT_EQ(accesses.ops[a.producer].source_id, graph.ops[g.producer].source_id);
    EXPECT_EQ(accesses.ops[a.producer].kind, graph.ops[g.producer].kind);
  }
  ASSERT_EQ(from_accesses.devices.size(), from_graph.devices.size());
  for (size_t d = 0; d < from_graph.devices.size(); ++d) {
    EXPECT_EQ(from_accesses.devices[d].peak_bytes, from_graph.devices[d].peak_bytes);
    EXPECT_EQ(from_accesses.devices[d].points.size(), from_graph.devices[d].points.size());
  }
  Producers producers(opened);
  EXPECT_EQ(producers.of(accesses, item(from_accesses, Kind::Block, b2).producer).name, "produce()");
}

TEST_F(PeakOfOneDevice, FreeingAtLastUseKeepsLibrariesLifetimes) {
  trace::Trace opened(trace.db());
  MemoryModel built = model(opened);
  MemoryWhatIf whatif = memory_what_if(opened, built, device(built, 0));
  // B2 (4000 to 5300) beside the workspaces A and C, kept whole; B1 was never used.
  EXPECT_EQ(whatif.freed_at_last_use, 2048 + 1000 + 500);
  // One phase: the allocator keeps the most its blocks held (3072 B), not the segment.
  EXPECT_EQ(whatif.cache_released_between_steps, 1000 + 500 + 3072);
}

// The program's allocations, each ended at its last use: X (1000 B) last
// used at 1600, Y (2000 B) from 5000 to its last use at 5600; both freed at
// 9000 in the run.
TEST_F(MemoryTest, FreeingAtLastUseLeavesOnlyWhatIsInUse) {
  int64_t x = allocation(AllocKind::Device, 1000, 1000, 9000);
  int64_t y = allocation(AllocKind::Device, 2000, 5000, 9000);
  allocation(AllocKind::Device, 4000, 500, 9000);  // never used: never made
  kernel("use_x", 1400, 100, {{x, A::Write}});
  kernel("use_y", 5400, 100, {{y, A::Write}});
  trace::Trace opened(trace.db());
  MemoryModel built = model(opened);
  const DeviceMemory& gpu = device(built, 0);
  EXPECT_EQ(gpu.peak_live_bytes, 7000);
  EXPECT_EQ(owner_bytes(gpu, Owner::Program), 7000);
  EXPECT_EQ(memory_what_if(opened, built, gpu).freed_at_last_use, 2000);
}

// Memory made inside an NCCL call is NCCL's; device memory outside the
// framework's blocks in a framework process is a library's workspace.
TEST_F(MemoryTest, LibrariesOwnWhatTheyMake) {
  trace.add_call(1, "cudaMalloc", 1, 1100, 1200);
  collective_call(1, 1000, 2000);
  int64_t nccl = allocation(AllocKind::Device, 300, 1100, std::nullopt, 1);
  int64_t workspace = allocation(AllocKind::Device, 200, 3000);
  int64_t segment = allocation(AllocKind::Device, 4096, 3000);
  block(segment, 0, 4096, 3000);
  int64_t mapped = allocation(AllocKind::MappedHost, 64, 3000);
  trace::Trace opened(trace.db());
  MemoryModel built = model(opened);
  EXPECT_EQ(item(built, Kind::Allocation, nccl).owner, Owner::Communication);
  EXPECT_EQ(item(built, Kind::Allocation, workspace).owner, Owner::Library);
  EXPECT_EQ(item(built, Kind::Allocation, mapped).owner, Owner::MappedHost);
  const DeviceMemory& gpu = device(built, 0);
  EXPECT_EQ(owner_bytes(gpu, Owner::Communication), 300);
  EXPECT_EQ(owner_bytes(gpu, Owner::Library), 200);
  EXPECT_EQ(owner_bytes(gpu, Owner::FrameworkTensors), 4096);
  EXPECT_EQ(owner_bytes(gpu, Owner::FrameworkCache), 0);
}

// Kernels see a virtual-memory mapping's addresses, never its physical
// handle: the handle (the memory, XLA's whole pool) is used when the
// mapping made of it is (the handle made last before the mapping: the trace
// does not name it). A handle never mapped stays unused.
TEST_F(MemoryTest, PhysicalMemoryIsUsedThroughItsMapping) {
  int64_t handle = allocation(AllocKind::VmmPhysical, 1 << 20, 1000);
  int64_t mapping = allocation(AllocKind::VmmMapping, 1 << 20, 1100);
  int64_t idle = allocation(AllocKind::VmmPhysical, 1 << 20, 1200);
  kernel("fill", 2000, 100, {{mapping, A::Write}});
  kernel("read", 3000, 100, {{mapping, A::Read, 4096}});
  trace::Trace opened(trace.db());
  MemoryModel built = model(opened);
  const MemoryItem& used = item(built, Kind::Allocation, handle);
  EXPECT_EQ(used.first_use_ns, 2100);
  EXPECT_EQ(used.last_use_ns, 3200);
  EXPECT_NE(used.producer, kNoOp);
  EXPECT_FALSE(item(built, Kind::Allocation, idle).first_use_ns);
  // A mapping holds no memory of its own: the device's peak is the handles'.
  EXPECT_EQ(device(built, 0).peak_bytes, 2 << 20);
}

// A JAX process makes no device memory itself: what XLA's allocator maps
// (its pool, a physical handle and its mapping) is XLA's, and what it makes
// while XLA compiles is the compiler's scratch. In a process where XLA never
// compiled, the same allocation is the program's.
TEST_F(MemoryTest, AJaxProcessDeviceMemoryIsXlas) {
  int64_t pool = allocation(AllocKind::VmmPhysical, 1 << 20, 1000);
  allocation(AllocKind::VmmMapping, 1 << 20, 1100);
  trace::Trace before(trace.db());
  EXPECT_EQ(item(model(before), Kind::Allocation, pool).owner, Owner::Program);
  testing::NvtxRangeRow compile;
  compile.name = "XlaCompile:#module=jit_train_step#";
  compile.tid = 1;
  compile.start_ns = 2000;
  compile.end_ns = 3000;
  trace.add(compile);
  trace.add_call(1, "cuMemAlloc_v2", 1, 2100, 2200);
  int64_t scratch = allocation(AllocKind::Device, 4096, 2100, 2900, 1);
  trace::Trace opened(trace.db());
  MemoryModel built = model(opened);
  EXPECT_EQ(item(built, Kind::Allocation, pool).owner, Owner::Xla);
  EXPECT_EQ(item(built, Kind::Allocation, scratch).owner, Owner::Library);
  EXPECT_EQ(owner_bytes(device(built, 0), Owner::Xla), 1 << 20);
  EXPECT_EQ(owner_name(Owner::Xla), "xla");
}

// NCCL sets up a group's connections when the group ends, after its
// operations' calls returned: the buffers it maps then are NCCL's too.
TEST_F(MemoryTest, WhatNcclMakesWhenAGroupEndsIsNccls) {
  trace.add_call(1, "cuMemCreate", 1, 2100, 2200);
  collective_call(1, 1000, 1500, 7);
  apptracer::NcclGroupRow group;
  group.group_id = 7;
  group.tid = 1;
  group.start_ns = 2000;
  group.end_ns = 3000;
  trace.add(group);
  int64_t buffers = allocation(AllocKind::VmmPhysical, 10 << 20, 2100, std::nullopt, 1);
  trace::Trace opened(trace.db());
  MemoryModel built = model(opened);
  EXPECT_EQ(item(built, Kind::Allocation, buffers).owner, Owner::Communication);
  EXPECT_EQ(owner_bytes(device(built, 0), Owner::Communication), 10 << 20);
}

// NCCL sets up connections on a thread it starts inside the first
// collective: what that thread makes while the call runs is NCCL's; a
// thread first seen outside any call is the program's.
TEST_F(MemoryTest, WhatAThreadNcclStartsMakesIsNccls) {
  collective_call(1, 1000, 5000);
  for (int64_t tid : {2, 3}) {
    apptracer::ThreadRow thread;
    thread.tid = tid;
    thread.first_seen_ns = tid == 2 ? 1500 : 6000;
    trace.add(thread);
    int64_t start = tid == 2 ? 2000 : 6100;
    trace.add_call(tid, "cuMemCreate", tid, start, start + 100);
  }
  int64_t helpers = allocation(AllocKind::VmmPhysical, 10 << 20, 2000, std::nullopt, 2);
  int64_t programs = allocation(AllocKind::VmmPhysical, 1 << 20, 6100, std::nullopt, 3);
  trace::Trace opened(trace.db());
  MemoryModel built = model(opened);
  EXPECT_EQ(item(built, Kind::Allocation, helpers).owner, Owner::Communication);
  EXPECT_EQ(item(built, Kind::Allocation, programs).owner, Owner::Program);
}

// Memory back at one level several times: each moment it rose to the peak.
TEST_F(MemoryTest, EachRiseToThePeakIsAPeakMoment) {
  allocation(AllocKind::Device, 100, 1000, 2000);
  allocation(AllocKind::Device, 100, 3000, 4000);
  allocation(AllocKind::Device, 50, 5000, 6000);
  trace::Trace opened(trace.db());
  MemoryModel built = model(opened);
  const DeviceMemory& gpu = device(built, 0);
  EXPECT_EQ(gpu.peak_bytes, 100);
  EXPECT_EQ(gpu.peak_ns, (std::vector<int64_t>{1000, 3000}));
}

// Steps from NVTX ranges: each step's memory at its end, and its own peak;
// limited to some steps, the peak is the window's.
class StepsOfMemory : public MemoryTest {
 protected:
  void SetUp() override {
    segment = allocation(AllocKind::Device, 1 << 20, 0);
    for (int s = 1; s <= 4; ++s) {
      int64_t start = s * 10'000;
      range("step " + std::to_string(s), start, start + 9'999);
      kernel("work", start + 100, 100, {});
      // A temporary of s * 1000 B in every step, and 100 B kept for good.
      block(segment, 0, s * 1000, start + 1000, start + 2000, start + 2000);
      block(segment, 8192 + s * 128, 100, start + 3000);
    }
  }
  int64_t segment = 0;
};

TEST_F(StepsOfMemory, EachStepIsSeenAtItsEnd) {
  trace::Trace opened(trace.db());
  MemoryModel built = model(opened);
  const DeviceMemory& gpu = device(built, 0);
  ASSERT_EQ(gpu.steps.size(), 4u);
  for (int s = 1; s <= 4; ++s) {
    const StepMemory& step = gpu.steps[s - 1];
    EXPECT_EQ(step.number, s);
    EXPECT_EQ(step.framework_live, s * 100);
    EXPECT_EQ(step.reserved, 1 << 20);
    EXPECT_EQ(step.in_use, 1 << 20);
    EXPECT_EQ(step.live, s * 100);
  }
}

TEST_F(StepsOfMemory, AStepWindowHasItsOwnPeakAndWhatIf) {
  trace::Trace opened(trace.db());
  trace::StepSelection selection;
  selection.numbers = std::make_pair(int64_t{2}, int64_t{2});
  opened.limit_to_steps(selection);
  MemoryModel built = model(opened);
  const DeviceMemory& gpu = device(built, 0);
  ASSERT_EQ(gpu.steps.size(), 1u);
  EXPECT_EQ(gpu.peak_live_bytes, 2000 + 100);
  ASSERT_FALSE(gpu.peak_ns.empty());
  EXPECT_EQ(gpu.peak_ns.front(), 20'000);  // the segment is in use from the window's start
  MemoryWhatIf whatif = memory_what_if(opened, built, gpu);
  // Emptied at the step's start, the cache then holds at most the step's temporary and what is kept.
  EXPECT_EQ(whatif.cache_released_between_steps, 2000 + 100);
}

}  // namespace
}  // namespace apptracer::memory
