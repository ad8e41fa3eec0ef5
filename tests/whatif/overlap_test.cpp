// --overlap: a copy leaves the stream it shares with kernels and is held
// only by the data it reads and writes, as the DVDG sees them.
#include <gtest/gtest.h>

#include "whatif_fixture.h"

namespace apptracer::whatif {
namespace {

class Overlap : public WhatifTest {
 public:
  int64_t buffer(AllocKind kind, int64_t address, int64_t bytes) {
    testing::AllocationRow row;
    row.kind = kind;
    row.address = address;
    row.bytes = bytes;
    row.device = kind == AllocKind::Device ? std::optional<int64_t>(0) : std::nullopt;
    return trace_->add(row);
  }
  void argument(int64_t kernel_id, int index, int64_t alloc, AccessKind access) {
    testing::KernelArgRow row;
    row.kernel_id = kernel_id;
    row.param_index = index;
    row.offset = 8 * index;
    row.alloc_id = alloc;
    row.alloc_offset = 0;
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

}  // namespace
}  // namespace apptracer::whatif
