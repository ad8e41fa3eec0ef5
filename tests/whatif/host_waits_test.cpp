// --no-syncs: the steady steps' host waits taken out (host_waits.h), worked
// out by hand. Each step (an NVTX range "step", thread 1) launches a 20 us
// kernel (call [0, 1 us], kernel from 2 us), then reads a value back: a
// cudaStreamSynchronize from 3 us that returns 500 ns after the kernel
// (22.5 us), or a blocking cudaMemcpy to pageable memory; the next step
// begins 500 ns later. The host waits 19.5 us of each 23.
#include <gtest/gtest.h>

#include "whatif_fixture.h"

namespace apptracer::whatif {
namespace {

class HostWaits : public WhatifTest {
 public:
  enum class ReadBack { Sync, BlockingCopy };

  // A start-up synchronization (before the first step, kept), then `steps` steps.
  void steps(int steps, ReadBack read_back) {
    sync(call("cudaDeviceSynchronize", 0, 500), SyncKind::Device, 0, 500);
    int64_t at = 1'000;
    for (int s = 0; s < steps; ++s) {
      kernel(call("cudaLaunchKernel", at, at + 1'000), at, at + 2'000, at + 22'000);
      if (read_back == ReadBack::Sync) {
        sync(call("cudaStreamSynchronize", at + 3'000, at + 22'500), SyncKind::Stream, at + 3'000, at + 22'500, 7);
      } else {
        copy(call("cudaMemcpy", at + 3'000, at + 22'500), Copy(CopyKind::DtoH, MemoryKind::Pageable, 4, false),
             at + 3'000, at + 22'000, at + 22'001);
      }
      testing::NvtxRangeRow range;
      range.name = "step";
      range.start_ns = at;
      range.end_ns = at + 23'000;
      trace_->add(range);
      at += 23'000;
    }
  }

  WhatifResult no_syncs() {
    WhatifOptions options;
    options.no_syncs = true;
    return run(options);
  }

  static bool noted(const WhatifResult& result, const std::string& text) {
    for (const std::string& note : result.notes) {
      if (note.find(text) != std::string::npos) return true;
    }
    return false;
  }
};

// The host no longer waits: its steps take 3.5 us and a synchronization's
// own cost, so it runs ahead and the kernels run back to back from 3 us
// (the first one's issue latency): the last ends at 3 + 4 x 20 us. The
// start-up synchronization is kept.
TEST_F(HostWaits, SynchronizationsInTheStepsNoLongerHoldTheHost) {
  write_system({"DtoD.gpu0 0 1"});
  steps(4, ReadBack::Sync);
  WhatifResult result = no_syncs();
  EXPECT_EQ(result.baseline_ns, 1'000 + 3 * 23'000 + 22'500);
  EXPECT_EQ(result.predicted_ns, 3'000 + 4 * 20'000);
  EXPECT_EQ(result.changes, std::vector<std::string>{"--no-syncs"});
  EXPECT_TRUE(noted(result, "--no-syncs: 4 synchronization(s) and 0 blocking copies back to the host in the 4 "
                            "steady steps (from NVTX ranges"));
}

// A blocking read-back copy (loss.item()'s) no longer blocks its call either;
// the copy itself still runs after the kernel it reads.
TEST_F(HostWaits, BlockingCopiesBackToTheHostNoLongerBlock) {
  write_system({"DtoD.gpu0 0 1"});
  steps(4, ReadBack::BlockingCopy);
  WhatifResult result = no_syncs();
  EXPECT_TRUE(noted(result, "--no-syncs: 0 synchronization(s) and 4 blocking copies back to the host"));
  EXPECT_EQ(result.baseline_ns, 1'000 + 3 * 23'000 + 22'500);
  // The kernels back to back as above, then the last read-back (a few ns).
  EXPECT_GE(result.predicted_ns, 3'000 + 4 * 20'000);
  EXPECT_LE(result.predicted_ns, 3'000 + 4 * 20'000 + 100);
}

// An upload from pageable memory blocks while the host stages it, which no
// removed read-back changes: it keeps blocking (--pin is its what-if).
TEST_F(HostWaits, PageableUploadsKeepBlocking) {
  write_system({"DtoD.gpu0 0 1"});
  kernel(call("cudaLaunchKernel", 0, 1'000), 0, 2'000, 22'000);
  copy(call("cudaMemcpy", 3'000, 22'500), Copy(CopyKind::HtoD, MemoryKind::Pageable, 4, false), 3'000, 22'000,
       22'001);
  WhatifResult result = no_syncs();
  EXPECT_TRUE(noted(result, "--no-syncs: 0 synchronization(s) and 0 blocking copies back to the host in the run "
                            "(no steps found)"));
  EXPECT_EQ(result.predicted_ns, result.baseline_ns);
}

// --non-blocking: each step uploads its batch from pinned memory (a 10 us
// copy on stream 7, its call [0, 1 us]) and waits for it as PyTorch's
// blocking copy_ does (cudaStreamSynchronize of stream 7, returning 500 ns
// after the copy), then launches a 10 us kernel on the same stream; the next
// step begins 1 us after the kernel ends: 26 us a step (the system file
// prices the copy as recorded: 1 MB at 100 GB/s). Without the wait the
// host runs ahead and the GPU does the steps' copies and kernels back to back.
class NonBlocking : public HostWaits {
 public:
  void steps(int steps, int64_t sync_stream, CopyKind direction = CopyKind::HtoD) {
    int64_t at = 0;
    for (int s = 0; s < steps; ++s) {
      copy(call("cudaMemcpyAsync", at, at + 1'000), Copy(direction, MemoryKind::Pinned, 1'000'000), at, at + 2'000,
           at + 12'000);
      sync(call("cudaStreamSynchronize", at + 1'500, at + 12'500), SyncKind::Stream, at + 1'500, at + 12'500,
           sync_stream);
      kernel(call("cudaLaunchKernel", at + 13'000, at + 14'000), at + 13'000, at + 15'000, at + 25'000);
      at += 26'000;
    }
  }
  WhatifResult non_blocking() {
    WhatifOptions options;
    options.non_blocking = true;
    return run(options);
  }
};

TEST_F(NonBlocking, AnUploadsOwnWaitGoes) {
  write_system({"HtoD.pinned.node0.gpu0 0 100", "DtoD.gpu0 0 1"});
  steps(4, 7);
  WhatifResult result = non_blocking();
  // The steps found from the repeating launches (a copy and a kernel).
  EXPECT_TRUE(noted(result, "--non-blocking: 4 synchronization(s) of a copy's stream right after it on its "
                            "thread (a blocking copy from host memory to a GPU) in the 4 steady steps (from the "
                            "repeating launch sequence"))
      << ::testing::PrintToString(result.notes);
  EXPECT_EQ(result.changes, std::vector<std::string>{"--non-blocking"});
  EXPECT_GE(result.predicted_ns, 4 * 20'000);
  EXPECT_LE(result.predicted_ns, 4 * 20'000 + 3'000);
  EXPECT_GT(result.baseline_ns, 3 * 26'000);
}

// A wait for another stream is not the upload's: it stays.
TEST_F(NonBlocking, AWaitForAnotherStreamStays) {
  write_system({"HtoD.pinned.node0.gpu0 0 100", "DtoD.gpu0 0 1"});
  steps(4, 8);
  WhatifResult result = non_blocking();
  EXPECT_TRUE(noted(result, "--non-blocking: 0 synchronization(s)"));
  EXPECT_EQ(result.predicted_ns, result.baseline_ns);
}

// Nor is one after a copy back to the host, whose value the host then reads.
TEST_F(NonBlocking, AWaitAfterADownloadStays) {
  write_system({"DtoH.pinned.node0.gpu0 0 100", "DtoD.gpu0 0 1"});
  steps(4, 7, CopyKind::DtoH);
  WhatifResult result = non_blocking();
  EXPECT_TRUE(noted(result, "--non-blocking: 0 synchronization(s)"));
  EXPECT_EQ(result.predicted_ns, result.baseline_ns);
}

}  // namespace
}  // namespace apptracer::whatif
