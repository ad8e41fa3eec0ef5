// Threads that wake each other (HostCall::woken_by): a thread that idled
// until another thread's call ended starts when that call ends in the
// what-if, not at its recorded time.
#include <gtest/gtest.h>

#include "whatif_fixture.h"

namespace apptracer::whatif {
namespace {

// The main thread (1) runs a kernel and waits for it; a worker thread (2),
// idle until then, launches its kernel 70 ns after that wait returned and
// waits for it; the main thread, idle meanwhile, goes on 70 ns after the
// worker's wait returned (as PyTorch's main thread waits in backward() for
// the autograd thread). Each launch takes 10 ns, each kernel starts 20 ns
// after its launch began, each wait returns 10 ns after its kernel.
class WakingThreads : public WhatifTest {
 public:
  void SetUp() override {
    WhatifTest::SetUp();
    write_system({"HtoD.pinned.node0.gpu0 0 1"});
    kernel(call("cudaLaunchKernel", 0, 10, 1), 0, 20, 10020, 7);
    sync(call("cudaStreamSynchronize", 30, 10030, 1), SyncKind::Stream, 30, 10030, 7);
    kernel(call("cudaLaunchKernel", 10100, 10110, 2), 10100, 10120, 11120, 8);
    sync(call("cudaStreamSynchronize", 10130, 11130, 2), SyncKind::Stream, 10130, 11130, 8);
    kernel(call("cudaLaunchKernel", 11200, 11210, 1), 11200, 11220, 12220, 7);
    sync(call("cudaStreamSynchronize", 11230, 12230, 1), SyncKind::Stream, 11230, 12230, 7);
  }
};

TEST_F(WakingThreads, AWokenThreadStartsWhenItsWakerEnds) {
  WhatifResult baseline = run();
  EXPECT_EQ(baseline.recorded_ns, 12230);
  EXPECT_EQ(baseline.baseline_ns, 12230);
  WhatifOptions faster;
  faster.kernel_scale = 0.5;
  // The first kernel [20, 5020], its wait returns at 5030; the worker
  // launches at 5100, its kernel [5120, 5620], its wait returns at 5630; the
  // main thread launches at 5700, its kernel [5720, 6220], its wait
  // returns at 6230.
  WhatifResult result = run(faster);
  EXPECT_EQ(result.predicted_ns, 6230);
  bool woken = false;
  for (const PathStep& step : result.critical_path.steps) woken |= step.bound_by == DepReason::Thread;
  EXPECT_TRUE(woken);
}

// A thread busy with its own work between its calls (here 2000 ns after
// the other thread's call ended) was not woken by that call: it keeps its
// own pace.
TEST_F(WhatifTest, AThreadBusyWithItsOwnWorkIsNotWoken) {
  write_system({"HtoD.pinned.node0.gpu0 0 1"});
  kernel(call("cudaLaunchKernel", 0, 10, 1), 0, 20, 10020, 7);
  sync(call("cudaStreamSynchronize", 30, 10030, 1), SyncKind::Stream, 30, 10030, 7);
  kernel(call("cudaLaunchKernel", 9000, 9010, 2), 9000, 9020, 9520, 8);
  kernel(call("cudaLaunchKernel", 12030, 12040, 2), 12030, 12050, 12550, 8);
  sync(call("cudaStreamSynchronize", 12060, 12560, 2), SyncKind::Stream, 12060, 12560, 8);
  WhatifOptions faster;
  faster.kernel_scale = 0.5;
  // Thread 2 launches at 12030 as recorded: its kernel [12050, 12300], its
  // wait returns at 12310.
  EXPECT_EQ(run(faster).predicted_ns, 12310);
}

}  // namespace
}  // namespace apptracer::whatif
