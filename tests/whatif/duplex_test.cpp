// Duplex contention worked out by hand (timeline.h): while copies run both
// ways over GPU 0's host link, each moves at its path's duplex share of its
// speed; alone, at full speed. Systems have constant bandwidths and no
// latency: a copy of B bytes over a G GB/s path takes B / G ns alone.
#include <gtest/gtest.h>

#include "whatif_fixture.h"

namespace apptracer::whatif {
namespace {

bool has_note(const WhatifResult& result, const std::string& part) {
  for (const std::string& note : result.notes) {
    if (note.find(part) != std::string::npos) return true;
  }
  return false;
}

// An HtoD copy of 2000 bytes on stream 1 [110, 2110], a DtoH copy of 1000
// bytes on stream 2 issued 500 ns later [610, 1610], a device synchronization
// returning 10 after the later end.
class BothWays : public WhatifTest {
 public:
  void SetUp() override {
    WhatifTest::SetUp();
    copy(call("cudaMemcpyAsync", 100, 105), Copy{CopyKind::HtoD, MemoryKind::Pinned, 2000, true, 1}, 100, 110,
         2110);
    copy(call("cudaMemcpyAsync", 600, 605), Copy{CopyKind::DtoH, MemoryKind::Pinned, 1000, true, 2}, 600, 610,
         1610);
    sync(call("cudaDeviceSynchronize", 620, 2120), SyncKind::Device, 620, 2120);
  }
};

TEST_F(BothWays, EachDirectionSlowsOnlyWhileTheOtherRuns) {
  write_system({"HtoD.pinned.node0.gpu0 0 1 0.75", "DtoH.pinned.node0.gpu0 0 1 0.4"});
  WhatifResult result = run();
  EXPECT_EQ(result.recorded_ns, 2020);
  // HtoD alone [110, 610): 500 of its 2000 ns of work. Then both: HtoD at
  // 0.75 does its last 1500 in 2000 ns, ending at 2610; DtoH at 0.4 does
  // 800 of its 1000 by then and the last 200 alone: [610, 2810]. The sync
  // returns 10 later: 2820 - 100.
  EXPECT_EQ(result.baseline_ns, 2720);
  ASSERT_EQ(result.transfers.size(), 2u);
  EXPECT_EQ(result.transfers[0].baseline_ns, 2500);
  EXPECT_EQ(result.transfers[1].baseline_ns, 2200);
  EXPECT_TRUE(has_note(result, "baseline: 2 copies ran beside copies the other way"));
}

// The same copies on the tracer's clock (nanoseconds since the epoch, as
// every real trace has them): beyond a double's exact integers, where the
// shares would round each time to 256 ns, the copies take what they take
// counted from 0.
class BothWaysOnTheEpochClock : public WhatifTest {
 public:
  static constexpr int64_t kEpoch = 1'795'858'849'133'097'496;
  void SetUp() override {
    WhatifTest::SetUp();
    copy(call("cudaMemcpyAsync", kEpoch + 100, kEpoch + 105), Copy{CopyKind::HtoD, MemoryKind::Pinned, 2000, true, 1},
         kEpoch + 100, kEpoch + 110, kEpoch + 2110);
    copy(call("cudaMemcpyAsync", kEpoch + 600, kEpoch + 605), Copy{CopyKind::DtoH, MemoryKind::Pinned, 1000, true, 2},
         kEpoch + 600, kEpoch + 610, kEpoch + 1610);
    sync(call("cudaDeviceSynchronize", kEpoch + 620, kEpoch + 2120), SyncKind::Device, kEpoch + 620, kEpoch + 2120);
  }
};

TEST_F(BothWaysOnTheEpochClock, SharesAreExactToTheNanosecond) {
  write_system({"HtoD.pinned.node0.gpu0 0 1 0.75", "DtoH.pinned.node0.gpu0 0 1 0.4"});
  WhatifResult result = run();
  EXPECT_EQ(result.baseline_ns, 2720);
  ASSERT_EQ(result.transfers.size(), 2u);
  EXPECT_EQ(result.transfers[0].baseline_ns, 2500);
  EXPECT_EQ(result.transfers[1].baseline_ns, 2200);
}

TEST_F(BothWays, HalfSharesHalveBothSpeedsOnlyWhileBothRun) {
  write_system({"HtoD.pinned.node0.gpu0 0 2 0.5", "DtoH.pinned.node0.gpu0 0 0.5 0.5"});
  WhatifResult result = run();
  // HtoD takes 1000 alone, DtoH 2000. HtoD alone [110, 610): 500 of its
  // 1000; both at half speed: HtoD's last 500 take 1000 (ends 1610), DtoH
  // does 500 by then, its last 1500 alone: [610, 3110], sync at 3120.
  EXPECT_EQ(result.baseline_ns, 3020);
  EXPECT_EQ(result.transfers[0].baseline_ns, 1500);
  EXPECT_EQ(result.transfers[1].baseline_ns, 2500);
}

TEST_F(BothWays, ASystemFileWithoutDuplexLeavesThemAloneAndSaysSo) {
  write_system({"HtoD.pinned.node0.gpu0 0 1", "DtoH.pinned.node0.gpu0 0 1"});
  WhatifResult result = run();
  // HtoD [110, 2110], DtoH [610, 1610]: as recorded.
  EXPECT_EQ(result.baseline_ns, 2020);
  EXPECT_TRUE(has_note(result, "baseline: " + system_path_ +
                                   " has no duplex measurement for DtoH.pinned.node0.gpu0, HtoD.pinned.node0.gpu0: "
                                   "copies beside copies the other way are not slowed"));
  // Another machine's file with it slows the what-if only.
  std::string other = base_ + "_other.json";
  write_system({"HtoD.pinned.node0.gpu0 0 1 0.75", "DtoH.pinned.node0.gpu0 0 1 0.4"}, other, "NVIDIA H200");
  WhatifOptions options;
  options.system2_path = other;
  result = run(options);
  std::remove(other.c_str());
  EXPECT_EQ(result.baseline_ns, 2020);
  EXPECT_EQ(result.predicted_ns, 2720);
  EXPECT_EQ(result.transfers[1].predicted_ns, 2200);
  EXPECT_TRUE(has_note(result, "what-if: 2 copies ran beside copies the other way"));
}

// Not a penalty per copy: copies that take turns on one stream never run
// beside each other, so they keep their full speed.
TEST_F(WhatifTest, CopiesTakingTurnsOnOneStreamAreNotSlowed) {
  write_system({"HtoD.pinned.node0.gpu0 0 2 0.5", "DtoH.pinned.node0.gpu0 0 2 0.5"});
  copy(call("cudaMemcpyAsync", 100, 110), Copy{CopyKind::HtoD, MemoryKind::Pinned, 1000}, 100, 120, 1120);
  copy(call("cudaMemcpyAsync", 150, 160), Copy{CopyKind::DtoH, MemoryKind::Pinned, 2000}, 150, 1125, 3125);
  sync(call("cudaDeviceSynchronize", 170, 3135), SyncKind::Device, 170, 3135);
  WhatifResult result = run();
  // HtoD [120, 620]; DtoH after its recorded gap of 5: [625, 1625]; +10.
  EXPECT_EQ(result.baseline_ns, 1635 - 100);
  EXPECT_FALSE(has_note(result, "ran beside"));
}

// Copies the same way take turns at full speed (timeline.h); while they do,
// the other direction is busy throughout, so a DtoH copy beside two HtoD
// copies is slowed for as long as either runs.
TEST_F(WhatifTest, TheOtherDirectionIsBusyWhileAnyOfItsCopiesRuns) {
  write_system({"HtoD.pinned.node0.gpu0 0 1 1", "DtoH.pinned.node0.gpu0 0 1 0.5"});
  copy(call("cudaMemcpyAsync", 100, 105), Copy{CopyKind::HtoD, MemoryKind::Pinned, 1000, true, 1}, 100, 110,
       1110);
  copy(call("cudaMemcpyAsync", 110, 115), Copy{CopyKind::HtoD, MemoryKind::Pinned, 1000, true, 3}, 110, 1110,
       2110);
  copy(call("cudaMemcpyAsync", 120, 125), Copy{CopyKind::DtoH, MemoryKind::Pinned, 1500, true, 2}, 120, 130,
       1630);
  sync(call("cudaDeviceSynchronize", 130, 2120), SyncKind::Device, 130, 2120);
  WhatifResult result = run();
  // HtoD keeps its full speed (share 1): [110, 1110], [1110, 2110]. DtoH at
  // half speed from 130 while they run: its 1500 take 3000, but HtoD is
  // done at 2110: 990 done by then, the last 510 alone: [130, 2620]; +10.
  EXPECT_EQ(result.baseline_ns, 2630 - 100);
  EXPECT_EQ(result.transfers[1].baseline_ns, 2490);
}

}  // namespace
}  // namespace apptracer::whatif
