// The slot pool of --exact (exact/slot_pool.h) with host memory standing in
// for the GPU: the tests fill slots as the device patch would and check what
// is read back, when, and that each slot is ready for its next launch.
#include "exact/slot_pool.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <vector>

namespace apptracer::exact {
namespace {

class HostMemory : public DeviceMemory {
 public:
  void* allocate(void*, uint64_t bytes) override { return fail_allocation ? nullptr : std::malloc(bytes); }
  void release(void*, void* device) override { std::free(device); }
  bool to_host(void* host, const void* device, uint64_t bytes, StreamHandle) override {
    ++copies_back;
    std::memcpy(host, device, bytes);
    return true;
  }
  bool to_device(void* device, const void* host, uint64_t bytes, StreamHandle) override {
    std::memcpy(device, host, bytes);
    return true;
  }
  bool zero(void* device, uint64_t bytes, StreamHandle) override {
    std::memset(device, 0, bytes);
    return true;
  }
  bool synchronize(StreamHandle) override { return true; }

  bool fail_allocation = false;
  int copies_back = 0;
};

struct Retired {
  LaunchFacts launch;
  DecodedLaunch decoded;
};

class SlotPoolTest : public ::testing::Test {
 protected:
  SlotPool make_pool(uint32_t slots, uint32_t capacity) {
    return SlotPool(memory_, nullptr, PoolOptions{slots, capacity},
                    [this](const LaunchFacts& launch, const DecodedLaunch& decoded) {
                      retired_.push_back({launch, decoded});
                    });
  }
  static LaunchFacts facts(uint64_t index) {
    LaunchFacts launch;
    launch.launch_index = index;
    return launch;
  }
  // What the patch does for `pages` pages written from `first_page` on: one
  // entry each, first granule written.
  static void fill(void* slot, uint64_t first_page, uint32_t pages) {
    auto* header = static_cast<SlotHeader*>(slot);
    auto* entries = reinterpret_cast<PageEntry*>(static_cast<char*>(slot) + entries_offset());
    for (uint32_t i = 0; i < pages; ++i) {
      entries[header->count + i] = PageEntry{first_page + i, {0, 0, 0, 0}, {1, 0, 0, 0}};
    }
    header->count += pages;
  }

  HostMemory memory_;
  std::vector<Retired> retired_;
  void* stream_a_ = reinterpret_cast<void*>(0xa);
  void* stream_b_ = reinterpret_cast<void*>(0xb);
};

TEST_F(SlotPoolTest, ASynchronizedStreamsLaunchesAreReadBackAndTheirSlotsReset) {
  SlotPool pool = make_pool(4, 16);
  void* on_a = pool.begin_launch(facts(1), stream_a_);
  void* on_b = pool.begin_launch(facts(2), stream_b_);
  ASSERT_NE(on_a, nullptr);
  ASSERT_NE(on_a, on_b);
  fill(on_a, 0x10, 2);
  pool.retire_stream(stream_a_);
  ASSERT_EQ(retired_.size(), 1u) << "only stream a's launch";
  EXPECT_EQ(retired_[0].launch.launch_index, 1u);
  EXPECT_EQ(retired_[0].decoded.ranges,
            (std::vector<ExactRange>{{0x10000, 0x10020, AccessKind::Write, false},
                                     {0x11000, 0x11020, AccessKind::Write, false}}));
  const auto* header = static_cast<const SlotHeader*>(on_a);
  EXPECT_EQ(header->count, 0u);
  EXPECT_EQ(header->epoch, 2u) << "the index words of the last use now read as free";
  EXPECT_EQ(pool.in_flight(), 1u);
  pool.retire_all();
  EXPECT_EQ(retired_.size(), 2u);
  EXPECT_EQ(retired_[1].decoded.ranges.size(), 0u);
}

TEST_F(SlotPoolTest, WithEverySlotInFlightTheOldestLaunchIsReadBackFirst) {
  SlotPool pool = make_pool(2, 16);
  void* first = pool.begin_launch(facts(1), stream_a_);
  pool.begin_launch(facts(2), stream_b_);
  EXPECT_TRUE(retired_.empty());
  void* third = pool.begin_launch(facts(3), stream_b_);
  ASSERT_EQ(retired_.size(), 1u);
  EXPECT_EQ(retired_[0].launch.launch_index, 1u);
  EXPECT_EQ(third, first) << "the oldest launch's slot, read back, is reused";
}

TEST_F(SlotPoolTest, ATableWithManyPagesIsReadBackWhole) {
  SlotPool pool = make_pool(1, 600);
  void* slot = pool.begin_launch(facts(1), stream_a_);
  fill(slot, 0x100, 500);  // more than the first copy reads
  pool.retire_all();
  ASSERT_EQ(retired_.size(), 1u);
  EXPECT_EQ(retired_[0].decoded.pages, 500u);
  EXPECT_EQ(retired_[0].decoded.ranges.size(), 500u);
  EXPECT_EQ(memory_.copies_back, 2);
}

TEST_F(SlotPoolTest, WithoutGpuMemoryLaunchesSayTheyWereNotReadBack) {
  memory_.fail_allocation = true;
  SlotPool pool = make_pool(2, 16);
  EXPECT_EQ(pool.begin_launch(facts(1), stream_a_), nullptr);
  ASSERT_EQ(retired_.size(), 1u);
  EXPECT_EQ(retired_[0].launch.incomplete, ExactGap::NotReadBack);
}

}  // namespace
}  // namespace apptracer::exact
