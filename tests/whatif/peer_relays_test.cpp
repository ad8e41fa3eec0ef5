// --peer-copies: a copy from GPU 0 into host memory that a copy to GPU 1
// then takes on (a relay) becomes one peer copy from GPU 0 to GPU 1.
#include <gtest/gtest.h>

#include <algorithm>

#include "analyzer/whatif/peer_relays.h"
#include "whatif_fixture.h"

namespace apptracer::whatif {
namespace {

constexpr int64_t kGpu0Stream = 7, kGpu1Stream = 8, kEvent = 99;

class PeerRelays : public WhatifTest {
 public:
  void SetUp() override {
    WhatifTest::SetUp();
    testing::DeviceRow second;
    second.id = 1;
    second.uuid = "GPU-00000001";
    trace_->add_device(second);
  }

  // GPU 0 copies 2000 bytes of its buffer into the pinned host buffer
  // (recorded [10, 1010]) and records an event; GPU 1's stream waits for it,
  // copies the host buffer in ([1015, 2015]) to GPU `to` and runs a kernel
  // on it ([2020, 3020]); the host waits for GPU 1 ([100, 3030]).
  void relay(int to = 1) {
    on_gpu0_ = buffer(AllocKind::Device, 0x10000, 4096, 0);
    staging_ = buffer(AllocKind::PinnedHost, 0x900000, 2000);
    int64_t on_gpu1 = buffer(AllocKind::Device, 0x20000, 4096, to);
    Copy out{CopyKind::DtoH, MemoryKind::Pinned, 2000, true, kGpu0Stream};
    out.src_alloc = on_gpu0_;
    out.dst_alloc = staging_;
    copy(call("cudaMemcpyAsync", 0, 10), out, 0, 10, 1010);
    event(call("cudaEventRecord", 20, 30), StreamEventKind::Record, kEvent, kGpu0Stream, 20);
    event(call("cudaStreamWaitEvent", 40, 50), StreamEventKind::Wait, kEvent, kGpu1Stream, 40, to);
    Copy in{CopyKind::HtoD, MemoryKind::Pinned, 2000, true, kGpu1Stream};
    in.src_alloc = staging_;
    in.dst_alloc = on_gpu1;
    in.device = to;
    copy(call("cudaMemcpyAsync", 60, 70), in, 60, 1015, 2015);
    kernel(call("cudaLaunchKernel", 80, 90), 80, 2020, 3020, kGpu1Stream, "stencil", to);
    sync(call("cudaDeviceSynchronize", 100, 3030), SyncKind::Device, 100, 3030, std::nullopt, std::nullopt, to);
  }

  WhatifResult peer_copies() {
    WhatifOptions options;
    options.peer_copies = true;
    return run(options);
  }

  static bool has_note(const WhatifResult& result, const std::string& note) {
    return std::find(result.notes.begin(), result.notes.end(), note) != result.notes.end();
  }

  static const TransferSummary* transfer(const WhatifResult& result, const std::string& path) {
    for (const TransferSummary& t : result.transfers) {
      if (t.path == path) return &t;
    }
    return nullptr;
  }

  // The consumer kernel's start in the what-if: its step on the critical path.
  static int64_t consumer_start(const WhatifResult& result) {
    for (const PathStep& step : result.critical_path.steps) {
      if (step.kind == "kernel") return step.start_ns;
    }
    return -1;
  }

  int64_t on_gpu0_ = 0, staging_ = 0;
};

const std::vector<std::string> kHostPaths = {"DtoH.pinned.node0.gpu0 0 2", "HtoD.pinned.node0.gpu1 0 2"};

std::vector<std::string> with(std::vector<std::string> paths, const std::string& more) {
  paths.push_back(more);
  return paths;
}

TEST_F(PeerRelays, ARelayThroughTheHostBecomesOnePeerCopyAndItsCopyInIsGone) {
  write_system(with(kHostPaths, "PtoP.peer.gpu0.gpu1 0 4"));
  relay();
  WhatifResult result = peer_copies();
  EXPECT_EQ(result.recorded_ns, 3030);
  EXPECT_EQ(result.baseline_ns, 3030);
  // The peer copy is issued where the DtoH was, with its launch latency
  // (10): [10, 510] at 4 bytes/ns. The event record and GPU 1's wait for it
  // follow at 510; the copy in takes nothing there; the kernel follows it
  // after its own recorded gap (5): [515, 1515], 1505 ns earlier than
  // recorded (the copy out's 500 saved, the copy in's 1000 and its gap of 5
  // after the wait gone). The host's synchronization returns its tail (10)
  // after the kernel.
  EXPECT_EQ(consumer_start(result), 515);
  EXPECT_EQ(result.predicted_ns, 1525);
  const TransferSummary* out = transfer(result, "DtoH.pinned.node0.gpu0");
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(out->whatif_path, "PtoP.peer.gpu0.gpu1");
  EXPECT_EQ(out->whatif_by, "PtoP.peer.gpu0.gpu1");
  EXPECT_EQ(out->predicted_ns, 500);
  const TransferSummary* in = transfer(result, "HtoD.pinned.node0.gpu1");
  ASSERT_NE(in, nullptr);
  EXPECT_EQ(in->whatif_path, kSentPeerToPeer);
  EXPECT_EQ(in->predicted_ns, 0);
  EXPECT_TRUE(has_note(result, "--peer-copies: 1 relay(s) through host memory (2.0 KiB) became peer copies; "
                               "their copies to the GPU take no time"));
  EXPECT_EQ(result.changes, std::vector<std::string>{"--peer-copies"});
}

TEST_F(PeerRelays, CallsThatWaitedForHostStagingNoLongerDo) {
  write_system({"DtoH.pageable.node0.gpu0 0 2", "HtoD.pageable.node0.gpu1 0 2", "PtoP.peer.gpu0.gpu1 0 4"});
  int64_t on_gpu0 = buffer(AllocKind::Device, 0x10000, 4096, 0);
  int64_t staging = buffer(AllocKind::PageableHost, 0x900000, 2000);
  int64_t on_gpu1 = buffer(AllocKind::Device, 0x20000, 4096, 1);
  // From and to pageable memory, each call waits for its copy.
  Copy out{CopyKind::DtoH, MemoryKind::Pageable, 2000, true, kGpu0Stream};
  out.src_alloc = on_gpu0;
  out.dst_alloc = staging;
  copy(call("cudaMemcpyAsync", 0, 1000), out, 0, 10, 990);
  Copy in{CopyKind::HtoD, MemoryKind::Pageable, 2000, true, kGpu1Stream};
  in.src_alloc = staging;
  in.dst_alloc = on_gpu1;
  in.device = 1;
  copy(call("cudaMemcpyAsync", 1010, 2010), in, 1010, 1020, 2000);
  kernel(call("cudaLaunchKernel", 2020, 2030), 2020, 2035, 3035, kGpu1Stream, "stencil", 1);
  sync(call("cudaDeviceSynchronize", 2040, 3045), SyncKind::Device, 2040, 3045, std::nullopt, std::nullopt, 1);
  WhatifResult result = peer_copies();
  EXPECT_EQ(result.baseline_ns, 3045);  // each staged copy took what its path's model says
  // Both calls return as the trace's calls that issued work do (10): [0, 10]
  // and, after their recorded gap, [20, 30]. The peer copy starts after the
  // trace's launch latency (the kernel's 15: a staged copy's start waited
  // for its staging): [15, 515]; the kernel, issued at 40, starts after its
  // launch latency but not before the peer copy: [515, 1515]; the
  // synchronization returns 10 after it.
  EXPECT_EQ(consumer_start(result), 515);
  EXPECT_EQ(result.predicted_ns, 1525);
}

TEST_F(PeerRelays, WithoutPeerAccessMeasuredTheCopyIsPricedStagedAndSaysSo) {
  write_system(with(kHostPaths, "PtoP.staged.gpu0.gpu1 0 1"));
  relay();
  WhatifResult result = peer_copies();
  // Staged at 1 byte/ns: [10, 2010]; the kernel 5 after it.
  EXPECT_EQ(consumer_start(result), 2015);
  EXPECT_EQ(result.predicted_ns, 3025);
  EXPECT_TRUE(has_note(result, "PtoP.peer.gpu0.gpu1 was not measured: priced as PtoP.staged.gpu0.gpu1"));
}

TEST_F(PeerRelays, ARelayNoPeerPathPricesIsKeptAsRecordedWithANote) {
  write_system(kHostPaths);
  relay();
  WhatifResult result = peer_copies();
  EXPECT_EQ(result.predicted_ns, result.baseline_ns);
  EXPECT_TRUE(has_note(result, "--peer-copies: 1 relay(s) kept as recorded: " + system_path_ +
                                   " has no PtoP path from GPU 0 to 1"));
  EXPECT_EQ(transfer(result, "HtoD.pinned.node0.gpu1")->whatif_path, "HtoD.pinned.node0.gpu1");
}

TEST_F(PeerRelays, ARoundTripToTheSameGpuIsNoRelay) {
  write_system({"DtoH.pinned.node0.gpu0 0 2", "HtoD.pinned.node0.gpu0 0 2", "PtoP.peer.gpu0.gpu1 0 4"});
  relay(0);
  WhatifResult result = peer_copies();
  EXPECT_EQ(result.predicted_ns, result.baseline_ns);
  EXPECT_TRUE(has_note(result, "--peer-copies: no data went from one GPU to another through host memory in "
                               "this trace (a copy to the host whose bytes a copy to another GPU took on, and "
                               "nothing else read)"));
}

TEST_F(PeerRelays, HostBytesAnotherCopyAlsoReadIsNoRelay) {
  write_system(with(kHostPaths, "PtoP.peer.gpu0.gpu1 0 4"));
  relay();
  // The host buffer also goes back to GPU 0: the host keeps a use for it.
  Copy back{CopyKind::HtoD, MemoryKind::Pinned, 2000, true, kGpu0Stream};
  back.src_alloc = staging_;
  back.dst_alloc = on_gpu0_;
  copy(call("cudaMemcpyAsync", 3040, 3050), back, 3040, 3050, 4050);
  WhatifResult result = peer_copies();
  EXPECT_EQ(result.predicted_ns, result.baseline_ns);
}

}  // namespace
}  // namespace apptracer::whatif
