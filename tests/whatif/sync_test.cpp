// Synchronizations replayed as waits, worked out by hand as in
// replay_test.cpp: the host resumes when the work a synchronization awaits
// ends in the replay, plus the call's own small cost; and the legacy default
// stream's implicit ordering with blocking streams.
#include <gtest/gtest.h>

#include "whatif_fixture.h"

namespace apptracer::whatif {
namespace {

// A synchronization's time is what it waited for, never host work: one that
// waited for nothing the replay sees (an event nothing recorded, a stream
// already done) takes the median of such calls, 4 ns here, not the 5000 ns
// the event synchronization took.
TEST_F(WhatifTest, ASynchronizationThatWaitedForNothingIsNoHostWork) {
  write_system({"DtoD.gpu0 0 1"});
  kernel(call("cudaLaunchKernel", 0, 10), 0, 20, 1020);
  sync(call("cudaStreamSynchronize", 20, 1030), SyncKind::Stream, 20, 1030, 7);
  sync(call("cudaEventSynchronize", 1040, 6040), SyncKind::Event, 1040, 6040, std::nullopt, 5);
  sync(call("cudaStreamSynchronize", 6050, 6054), SyncKind::Stream, 6050, 6054, 7);
  sync(call("cudaStreamSynchronize", 6060, 6064), SyncKind::Stream, 6060, 6064, 7);
  WhatifResult result = run();
  EXPECT_EQ(result.recorded_ns, 6064);
  // The kernel [20, 1020]; the first sync returns its tail (10) after it;
  // each later one starts its recorded host gap after the one before and
  // takes 4: [1040, 1044], [1054, 1058], [1064, 1068].
  EXPECT_EQ(result.baseline_ns, 1068);
  bool noted = false;
  for (const std::string& note : result.notes) {
    noted |= note == "a synchronization waits for the work it awaits in the replay, plus its own cost: 0.0 us, "
                     "the median of the trace's 3 that waited for nothing (the system file measures none)";
  }
  EXPECT_TRUE(noted);
  WhatifOptions options;
  options.kernel_scale = 2;
  // The kernel [20, 2020]: the first sync returns at 2030, the rest follow.
  EXPECT_EQ(run(options).predicted_ns, 2068);
}

// A one-stream pipeline step on blocking stream 7 (a HtoD, two kernels, a
// DtoH), its end timed by an event recorded on the legacy default stream
// (1) and cudaEventSynchronize: the record waits for stream 7's work, so the
// synchronization waits for the DtoH, and faster copies end it sooner.
class LegacyEvent : public WhatifTest {
 public:
  void build(StreamKind work_stream) {
    stream_kind(7, work_stream);
    stream_kind(1, StreamKind::Legacy);
    write_system({"HtoD.pinned.node0.gpu0 0 2", "DtoH.pinned.node0.gpu0 0 2"});
    copy(call("cudaMemcpyAsync", 0, 10), Copy{CopyKind::HtoD, MemoryKind::Pinned, 1000}, 0, 20, 1020);
    kernel(call("cudaLaunchKernel", 20, 30), 20, 1025, 2025);
    kernel(call("cudaLaunchKernel", 40, 50), 40, 2030, 3030);
    copy(call("cudaMemcpyAsync", 60, 70), Copy{CopyKind::DtoH, MemoryKind::Pinned, 1000}, 60, 3035, 4035);
    event(call("cudaEventRecord", 80, 85), StreamEventKind::Record, 9, 1, 80);
    sync(call("cudaEventSynchronize", 90, 4045), SyncKind::Event, 90, 4045, std::nullopt, 9);
  }
};

TEST_F(LegacyEvent, TheSynchronizationWaitsForTheBlockingStreamsWork) {
  build(StreamKind::Blocking);
  WhatifResult result = run();
  EXPECT_EQ(result.recorded_ns, 4045);
  // HtoD [20, 520]; the kernels 5 after what held them: [525, 1525],
  // [1530, 2530]; DtoH [2535, 3035]; the record is reached then and the
  // synchronization returns its recorded tail (10) later.
  EXPECT_EQ(result.baseline_ns, 3045);
  const std::vector<PathStep>& steps = result.critical_path.steps;
  ASSERT_FALSE(steps.empty());
  EXPECT_EQ(steps.back().name, "cudaEventSynchronize");
  EXPECT_EQ(steps.back().bound_by, DepReason::Wait);
  EXPECT_EQ(steps.back().own_ns, 10);
}

TEST_F(LegacyEvent, ANonBlockingStreamsWorkIsNotAwaited) {
  build(StreamKind::NonBlocking);
  // The record waits for nothing: the synchronization, the only one that
  // waited for nothing, takes what it took (3955), ending at 4045, after
  // the DtoH (3035).
  EXPECT_EQ(run().baseline_ns, 4045);
}

// A kernel on the legacy stream (1) issued while one on stream 7 runs: it
// waits for it unless stream 7 is non-blocking.
class LegacyKernel : public WhatifTest {
 public:
  int64_t predicted(StreamKind kind) {
    stream_kind(7, kind);
    stream_kind(1, StreamKind::Legacy);
    write_system({"DtoD.gpu0 0 1"});
    kernel(call("cudaLaunchKernel", 0, 10), 0, 10, 1010, 7);
    kernel(call("cudaLaunchKernel", 20, 30), 20, 1015, 1515, 1);
    WhatifOptions options;
    options.kernel_scale = 2;
    return run(options).predicted_ns;
  }
};

TEST_F(LegacyKernel, WaitsForABlockingStream) {
  // [10, 2010], then 5 later [2015, 3015].
  EXPECT_EQ(predicted(StreamKind::Blocking), 3015);
}

TEST_F(LegacyKernel, DoesNotWaitForANonBlockingStream) {
  // Nothing held it: it starts its recorded launch latency after its issue, [1015, 2015].
  EXPECT_EQ(predicted(StreamKind::NonBlocking), 2015);
}

TEST_F(WhatifTest, ABlockingStreamWaitsForTheLegacyStream) {
  stream_kind(7, StreamKind::Blocking);
  stream_kind(1, StreamKind::Legacy);
  write_system({"DtoD.gpu0 0 1"});
  kernel(call("cudaLaunchKernel", 0, 10), 0, 10, 1010, 1);
  kernel(call("cudaLaunchKernel", 20, 30), 20, 1015, 1515, 7);
  WhatifOptions options;
  options.kernel_scale = 2;
  EXPECT_EQ(run(options).predicted_ns, 3015);
}

// Synchronizing the legacy stream, with no work of its own, waits for the
// blocking streams' work.
TEST_F(WhatifTest, SynchronizingTheLegacyStreamWaitsForTheBlockingStreams) {
  stream_kind(7, StreamKind::Blocking);
  stream_kind(1, StreamKind::Legacy);
  write_system({"DtoD.gpu0 0 1"});
  kernel(call("cudaLaunchKernel", 0, 10), 0, 10, 1010, 7);
  sync(call("cudaStreamSynchronize", 20, 1020), SyncKind::Stream, 20, 1020, 1);
  WhatifOptions options;
  options.kernel_scale = 2;
  // The kernel [10, 2010]; the synchronization returns its tail (10) later.
  EXPECT_EQ(run(options).predicted_ns, 2020);
}

}  // namespace
}  // namespace apptracer::whatif
