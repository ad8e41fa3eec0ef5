// --overlap: a copy leaves the stream it shares with kernels and is held
// only by the data it reads and writes, as the DVDG sees them.
#include <gtest/gtest.h>

#include "whatif_fixture.h"

namespace apptracer::whatif {
namespace {

class Overlap : public WhatifTest {
 public:
  void argument(int64_t kernel_id, int index, int64_t alloc, AccessKind access,
                int64_t alloc_offset = 0) {
    testing::KernelArgRow row;
    row.kernel_id = kernel_id;
    row.param_index = index;
    row.offset = 8 * index;
    row.alloc_id = alloc;
    row.alloc_offset = alloc_offset;
    row.access = access;
    row.access_source = AccessSource::Sanitizer;
    trace_->add(row);
  }
};

TEST_F(Overlap, AnIndependentCopyRunsBesideTheKernelBeforeIt) {
  write_system({"HtoD.pinned.node0.gpu0 0 2"});
  int64_t a_d = buffer(AllocKind::Device, 0x10000, 4096);
  int64_t c_d = buffer(AllocKind::Device, 0x20000, 4096);
  int64_t b_h = buffer(AllocKind::PinnedHost, 0x900000, 2000);
  int64_t b_d = buffer(AllocKind::Device, 0x30000, 4096);
  int64_t e_d = buffer(AllocKind::Device, 0x40000, 4096);
  // k1 reads a_d and writes c_d; the copy fills b_d; k2 reads b_d and writes e_d.
  int64_t k1 = kernel(call("cudaLaunchKernel", 0, 10), 0, 10, 1010);
  argument(k1, 0, a_d, AccessKind::Read);
  argument(k1, 1, c_d, AccessKind::Write);
  Copy htod{CopyKind::HtoD, MemoryKind::Pinned, 2000};
  htod.src_alloc = b_h;
  htod.dst_alloc = b_d;
  copy(call("cudaMemcpyAsync", 20, 30), htod, 20, 1015, 2015);
  int64_t k2 = kernel(call("cudaLaunchKernel", 40, 50), 40, 2020, 3020);
  argument(k2, 0, b_d, AccessKind::Read);
  argument(k2, 1, e_d, AccessKind::Write);
  sync(call("cudaDeviceSynchronize", 60, 3030), SyncKind::Device, 60, 3030);

  WhatifResult serialized = run();
  EXPECT_EQ(serialized.recorded_ns, 3030);
  EXPECT_EQ(serialized.baseline_ns, 3030);

  WhatifOptions options;
  options.overlap = true;
  WhatifResult result = run(options);
  // The copy no longer waits for k1: issued at 20 with the trace's launch
  // latency (10): [30, 1030]. k2 needs both k1 (stream) and the copy (it
  // reads b_d): 5 after the later, [1035, 2035]. The sync waits for both
  // lanes of the stream and returns its tail (10) later.
  EXPECT_EQ(result.predicted_ns, 2045);
  EXPECT_EQ(result.notes.front(), "--overlap: 1 copy moved off the streams of their kernels");
}

// Two copies to the GPU with a kernel between them on one stream: the
// second waited the stream's turnaround (5) after the kernel. Moved to the
// HtoD copy lane, it follows the first copy as its copy engine frees, with
// no turnaround: it needs nothing the kernel touches.
TEST_F(Overlap, AMovedCopyStartsAsTheCopyBeforeItOnItsLaneEnds) {
  write_system({"HtoD.pinned.node0.gpu0 0 1"});
  int64_t a_h = buffer(AllocKind::PinnedHost, 0x900000, 1000);
  int64_t a_d = buffer(AllocKind::Device, 0x10000, 4096);
  int64_t b_h = buffer(AllocKind::PinnedHost, 0xa00000, 2000);
  int64_t b_d = buffer(AllocKind::Device, 0x20000, 4096);
  int64_t c_d = buffer(AllocKind::Device, 0x30000, 4096);
  Copy first{CopyKind::HtoD, MemoryKind::Pinned, 1000};
  first.src_alloc = a_h;
  first.dst_alloc = a_d;
  copy(call("cudaMemcpyAsync", 0, 10), first, 0, 10, 1010);
  int64_t k = kernel(call("cudaLaunchKernel", 20, 30), 20, 1015, 2015);
  argument(k, 0, a_d, AccessKind::Read);
  argument(k, 1, c_d, AccessKind::Write);
  Copy second{CopyKind::HtoD, MemoryKind::Pinned, 2000};
  second.src_alloc = b_h;
  second.dst_alloc = b_d;
  copy(call("cudaMemcpyAsync", 40, 50), second, 40, 2020, 4020);
  sync(call("cudaDeviceSynchronize", 60, 4030), SyncKind::Device, 60, 4030);
  EXPECT_EQ(run().baseline_ns, 4030);

  WhatifOptions options;
  options.overlap = true;
  WhatifResult result = run(options);
  // The second copy [1010, 3010]; the sync returns its tail (10) after it.
  EXPECT_EQ(result.predicted_ns, 3020);
}

TEST_F(Overlap, ACopyOfWhatAKernelWroteStillWaitsForIt) {
  write_system({"DtoH.pinned.node0.gpu0 0 2"});
  int64_t c_d = buffer(AllocKind::Device, 0x20000, 4096);
  int64_t c_h = buffer(AllocKind::PinnedHost, 0x900000, 2000);
  int64_t k1 = kernel(call("cudaLaunchKernel", 0, 10), 0, 10, 1010);
  argument(k1, 0, c_d, AccessKind::Write);
  Copy dtoh{CopyKind::DtoH, MemoryKind::Pinned, 2000};
  dtoh.src_alloc = c_d;
  dtoh.dst_alloc = c_h;
  copy(call("cudaMemcpyAsync", 20, 30), dtoh, 20, 1015, 2015);
  sync(call("cudaDeviceSynchronize", 40, 2025), SyncKind::Device, 40, 2025);
  WhatifOptions options;
  options.overlap = true;
  WhatifResult result = run(options);
  EXPECT_EQ(result.predicted_ns, result.recorded_ns);
  EXPECT_EQ(result.critical_path.steps[1].kind, "kernel");
  EXPECT_EQ(result.critical_path.steps[2].bound_by, DepReason::Data);
}

TEST_F(Overlap, AKernelWithUnknownArgumentsKeepsCopiesInPlace) {
  write_system({"HtoD.pinned.node0.gpu0 0 2"});
  int64_t b_h = buffer(AllocKind::PinnedHost, 0x900000, 2000);
  int64_t b_d = buffer(AllocKind::Device, 0x30000, 4096);
  kernel(call("cudaLaunchKernel", 0, 10), 0, 10, 1010);  // no kernel_args rows
  Copy htod{CopyKind::HtoD, MemoryKind::Pinned, 2000};
  htod.src_alloc = b_h;
  htod.dst_alloc = b_d;
  copy(call("cudaMemcpyAsync", 20, 30), htod, 20, 1015, 2015);
  sync(call("cudaDeviceSynchronize", 40, 2025), SyncKind::Device, 40, 2025);
  WhatifOptions options;
  options.overlap = true;
  EXPECT_EQ(run(options).predicted_ns, 2025);
}

// One device buffer in and one out, filled and drained a chunk at a time, the
// kernel of chunk i given both buffers at i * chunk: as one stream records
// it, everything takes turns (copy in, kernel, copy out: 1000 ns each).
class ChunkedPipeline : public Overlap {
 public:
  static constexpr int kChunks = 4;
  static constexpr int64_t kChunk = 1000;

  // `stride`: how far each launch's pointers move (0: every launch is given
  // the buffers' start, so each may touch all of them).
  WhatifResult overlapped(int64_t stride) {
    write_system({"HtoD.pinned.node0.gpu0 0 1", "DtoH.pinned.node0.gpu0 0 1"});
    int64_t in_h = buffer(AllocKind::PinnedHost, 0x900000, kChunks * kChunk);
    int64_t out_h = buffer(AllocKind::PinnedHost, 0xa00000, kChunks * kChunk);
    int64_t in_d = buffer(AllocKind::Device, 0x100000, kChunks * kChunk);
    int64_t out_d = buffer(AllocKind::Device, 0x200000, kChunks * kChunk);
    int64_t issue = 0;
    for (int i = 0; i < kChunks; ++i) {
      int64_t at = 3000 * i + 100;
      Copy in{CopyKind::HtoD, MemoryKind::Pinned, kChunk};
      in.src_alloc = in_h;
      in.dst_alloc = in_d;
      in.src_offset = in.dst_offset = i * kChunk;
      copy(call("cudaMemcpyAsync", issue, issue + 5), in, issue, at, at + 1000);
      issue += 10;
      int64_t k = kernel(call("cudaLaunchKernel", issue, issue + 5), issue, at + 1000, at + 2000);
      argument(k, 0, in_d, AccessKind::Read, i * stride);
      argument(k, 1, out_d, AccessKind::Write, i * stride);
      issue += 10;
      Copy out{CopyKind::DtoH, MemoryKind::Pinned, kChunk};
      out.src_alloc = out_d;
      out.dst_alloc = out_h;
      out.src_offset = out.dst_offset = i * kChunk;
      copy(call("cudaMemcpyAsync", issue, issue + 5), out, issue, at + 2000, at + 3000);
      issue += 10;
    }
    int64_t end = 3000 * kChunks + 110;
    sync(call("cudaDeviceSynchronize", issue, end), SyncKind::Device, issue, end);
    WhatifOptions options;
    options.overlap = true;
    return run(options);
  }
};

// The launches step through the buffers a chunk at a time, so each kernel
// works on its chunk: chunk i + 1's copy in runs beside chunk i's kernel,
// and the pipeline takes the copies in, one kernel and one copy out.
TEST_F(ChunkedPipeline, ChunkByChunkLaunchesOverlapWithTheNextChunksCopy) {
  WhatifResult result = overlapped(kChunk);
  EXPECT_EQ(result.baseline_ns, result.recorded_ns);
  EXPECT_GE(result.predicted_ns, (kChunks + 2) * 1000);
  EXPECT_LT(result.predicted_ns, (kChunks + 2) * 1000 + 500);
}

// Every launch given the buffers' start may read all of them: chunk i + 1's
// copy in must wait for chunk i's kernel.
TEST_F(ChunkedPipeline, LaunchesOnTheWholeBufferKeepCopiesInAfterThem) {
  WhatifResult result = overlapped(0);
  EXPECT_GE(result.predicted_ns, (2 * kChunks + 1) * 1000);
}

// Two tiles of a one-stream pipeline on blocking stream 7, each its own
// buffers: a copy in, two kernels, a copy out (1000 B copies, 500 ns
// kernels), after a set-up kernel and cudaDeviceSynchronize; the end an
// event recorded on the legacy default stream (1) and cudaEventSynchronize.
// Moved to copy lanes, the copies in run back to back on their engine, the
// copies out on theirs, each beside the kernels and the other direction,
// as the pipeline's overlapped twin (a copy-in, a kernel and a copy-out
// stream) runs them.
class Tiles : public Overlap {
 public:
  static constexpr int kTiles = 2;

  // `pageable`: the host buffers are pageable, so each copy's call stages it
  // (2000 ns: 1000 before an HtoD's DMA, 1000 after a DtoH's DMA, copying
  // out of the staging buffer), as the pageable path's model says.
  void build(bool pageable) {
    stream_kind(7, StreamKind::Blocking);
    stream_kind(1, StreamKind::Legacy);
    write_system({"HtoD.pinned.node0.gpu0 0 1", "DtoH.pinned.node0.gpu0 0 1", "HtoD.pageable.node0.gpu0 0 0.5",
                  "DtoH.pageable.node0.gpu0 0 0.5"});
    int64_t scratch = buffer(AllocKind::Device, 0x80000, 4096);
    int64_t setup = kernel(call("cudaLaunchKernel", 0, 10), 0, 10, 510);
    argument(setup, 0, scratch, AccessKind::Write);
    sync(call("cudaDeviceSynchronize", 20, 520), SyncKind::Device, 20, 520);
    MemoryKind host = pageable ? MemoryKind::Pageable : MemoryKind::Pinned;
    AllocKind host_alloc = pageable ? AllocKind::PageableHost : AllocKind::PinnedHost;
    int64_t t = 1000;  // the host's clock
    int64_t gpu = 1100;  // registered: the stream's
    for (int i = 0; i < kTiles; ++i) {
      int64_t in_h = buffer(host_alloc, 0x900000 + 0x10000 * i, 1000);
      int64_t out_h = buffer(host_alloc, 0xa00000 + 0x10000 * i, 1000);
      int64_t in_d = buffer(AllocKind::Device, 0x100000 + 0x10000 * i, 1000);
      int64_t mid_d = buffer(AllocKind::Device, 0x200000 + 0x10000 * i, 1000);
      int64_t out_d = buffer(AllocKind::Device, 0x300000 + 0x10000 * i, 1000);
      Copy in{CopyKind::HtoD, host, 1000};
      in.src_alloc = in_h;
      in.dst_alloc = in_d;
      Copy out{CopyKind::DtoH, host, 1000};
      out.src_alloc = out_d;
      out.dst_alloc = out_h;
      if (pageable) {
        copy(call("cudaMemcpyAsync", t, t + 2000), in, t, t + 1000, t + 2000);
        int64_t k1 = kernel(call("cudaLaunchKernel", t + 2010, t + 2020), t + 2010, t + 2020, t + 2520);
        int64_t k2 = kernel(call("cudaLaunchKernel", t + 2030, t + 2040), t + 2030, t + 2525, t + 3025);
        copy(call("cudaMemcpyAsync", t + 2050, t + 5030), out, t + 2050, t + 3030, t + 4030);
        arguments(k1, in_d, mid_d);
        arguments(k2, mid_d, out_d);
        t += 5040;
        continue;
      }
      copy(call("cudaMemcpyAsync", t, t + 10), in, t, gpu, gpu + 1000);
      int64_t k1 = kernel(call("cudaLaunchKernel", t + 10, t + 20), t + 10, gpu + 1005, gpu + 1505);
      int64_t k2 = kernel(call("cudaLaunchKernel", t + 20, t + 30), t + 20, gpu + 1510, gpu + 2010);
      copy(call("cudaMemcpyAsync", t + 30, t + 40), out, t + 30, gpu + 2015, gpu + 3015);
      arguments(k1, in_d, mid_d);
      arguments(k2, mid_d, out_d);
      t += 40;
      gpu += 3020;
    }
    int64_t last = pageable ? t - 1010 : gpu - 5;  // the last copy's DMA end
    event(call("cudaEventRecord", t + 10, t + 15), StreamEventKind::Record, 9, 1, t + 10);
    sync(call("cudaEventSynchronize", t + 20, std::max(last + 10, t + 30)), SyncKind::Event, t + 20,
         std::max(last + 10, t + 30), std::nullopt, 9);
  }

  void arguments(int64_t kernel_id, int64_t in, int64_t out) {
    argument(kernel_id, 0, in, AccessKind::Read);
    argument(kernel_id, 1, out, AccessKind::Write);
  }
};

TEST_F(Tiles, RegisteredOnOneStreamOverlapsAsItsTwinWould) {
  build(false);
  WhatifResult recorded = run();
  EXPECT_EQ(recorded.recorded_ns, 7145);
  EXPECT_EQ(recorded.baseline_ns, 7145);
  WhatifOptions options;
  options.overlap = true;
  // Copies in [1100, 2100], [2100, 3100]; tile 0's kernels [2105, 2605],
  // [2610, 3110]; its copy out [3115, 4115] beside tile 1's kernels
  // [3115, 3615], [3620, 4120]; tile 1's copy out after them and the first:
  // [4125, 5125]; the event is reached then, and the synchronization
  // returns its tail (10) later.
  EXPECT_EQ(run(options).predicted_ns, 5135);
}

TEST_F(Tiles, PageablePinnedAndOverlappedRunsAsTheRegisteredTwin) {
  build(true);
  EXPECT_EQ(run().recorded_ns, 11110);
  WhatifOptions pin;
  pin.pin = true;
  // The host no longer stages: its calls take the trace's 10 each, from
  // 1000. On one stream, each copy 10 after its issue or 5 after what held
  // it: [1010, 2010], kernels [2015, 2515], [2520, 3020], out [3025, 4025];
  // tile 1 [4030, 5030], [5035, 5535], [5540, 6040], [6045, 7045]; the
  // synchronization, which waited for nothing as recorded, returns the
  // trace's typical tail (10, the set-up's) after the event.
  EXPECT_EQ(run(pin).predicted_ns, 7055);
  pin.overlap = true;
  // Copies in [1010, 2010], [2010, 3010]; kernels [2015, 2515],
  // [2520, 3020], [3025, 3525], [3530, 4030]; copies out [3025, 4025],
  // [4035, 5035].
  EXPECT_EQ(run(pin).predicted_ns, 5045);
}

}  // namespace
}  // namespace apptracer::whatif
