// The allocation registry, split by address into shards (the host registry,
// where every thread's malloc and free land) or not (CUDA's): the same
// answers either way.
#include "buffer/allocation_registry.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace apptracer {
namespace {

constexpr uint64_t kMiB = uint64_t{1} << 20;

TEST(AllocationRegistry, AnInteriorPointerFindsABlockThatStartsInALowerRegion) {
  AllocationRegistry sharded(nullptr, 16);
  uint64_t id = sharded.add(63 * kMiB, 10 * kMiB, AllocKind::PageableHost, -1, 100);
  auto found = sharded.find(70 * kMiB, 200);
  ASSERT_TRUE(found);
  EXPECT_EQ(found->id, id);
  EXPECT_FALSE(sharded.find(73 * kMiB, 200)) << "one past its end";
}

TEST(AllocationRegistry, AnAddressReusedAfterAFreeResolvesByTime) {
  AllocationRegistry sharded(nullptr, 16);
  uint64_t first = sharded.add(4096, 8192, AllocKind::PageableHost, -1, 100);
  ASSERT_TRUE(sharded.remove(4096, 200));
  uint64_t second = sharded.add(4096, 8192, AllocKind::PageableHost, -1, 300);
  EXPECT_EQ(sharded.find(5000, 150)->id, first);
  EXPECT_FALSE(sharded.find(5000, 250)) << "between the free and the new block";
  EXPECT_EQ(sharded.find(5000, 350)->id, second);
}

TEST(AllocationRegistry, NextStartIsTheLowestAboveAcrossShards) {
  AllocationRegistry sharded(nullptr, 16);
  sharded.add(900 * kMiB, kMiB, AllocKind::PageableHost, -1, 10);
  sharded.add(200 * kMiB, kMiB, AllocKind::PageableHost, -1, 10);
  sharded.add(130 * kMiB, kMiB, AllocKind::PageableHost, -1, 50);
  EXPECT_EQ(sharded.next_start(100 * kMiB, 20), 200 * kMiB) << "the block at 130 MiB came later";
  EXPECT_EQ(sharded.next_start(100 * kMiB, 60), 130 * kMiB);
  EXPECT_EQ(sharded.next_start(901 * kMiB, 60), UINT64_MAX);
}

// A free only logs the allocation; lookups index the log. Across the log's
// chunks, and around forgetting, answers are those of the indexed history.
TEST(AllocationRegistry, FreesNotYetIndexedAnswerAsIndexedOnes) {
  AllocationRegistry registry;
  constexpr uint64_t kBlocks = 3000;
  for (uint64_t i = 0; i < kBlocks; ++i) {
    registry.add(i * 8192, 4096, AllocKind::PageableHost, -1, 10 * i);
    registry.remove(i * 8192, 10 * i + 5);
  }
  registry.forget_freed_before(10 * 1000);
  EXPECT_FALSE(registry.find(999 * 8192, 10 * 999 + 1)) << "freed before the cutoff";
  EXPECT_EQ(registry.find(1000 * 8192 + 10, 10 * 1000 + 1)->address, 1000 * 8192);
  for (uint64_t i = kBlocks; i < 2 * kBlocks; ++i) {
    registry.add(i * 8192, 4096, AllocKind::PageableHost, -1, 10 * i);
    registry.remove(i * 8192, 10 * i + 5);
  }
  registry.forget_freed_before(10 * 4000);
  EXPECT_FALSE(registry.find(2000 * 8192, 10 * 2000 + 1)) << "indexed, then forgotten";
  EXPECT_FALSE(registry.find(3999 * 8192, 10 * 3999 + 1)) << "forgotten unindexed";
  EXPECT_EQ(registry.find(5999 * 8192, 10 * 5999 + 1)->address, 5999 * 8192);
  EXPECT_EQ(registry.next_start(4000 * 8192 + 1, 10 * 4001 + 1), 4001 * 8192);
}

TEST(AllocationRegistry, AFreeAfterTheAddressWasReusedEndsTheOldAllocation) {
  AllocationRegistry registry;
  uint64_t old = registry.add(0x4000, 4096, AllocKind::PageableHost, -1, 10);
  registry.add(0x4000, 4096, AllocKind::PageableHost, -1, 20);  // its free's callback came late
  std::optional<AllocationInfo> ended = registry.remove(0x4000, 15);
  ASSERT_TRUE(ended);
  EXPECT_EQ(ended->id, old);
}

// Random non-overlapping lifetimes over 2 GiB, blocks of 4 KiB to 200 MiB:
// a sharded registry answers every find and next_start as one lock would.
TEST(AllocationRegistry, ShardedAnswersAsUnsharded) {
  std::mt19937_64 random(7);
  AllocationRegistry one, sharded(nullptr, 16);
  struct Live {
    uint64_t address, bytes;
  };
  std::vector<Live> live;
  uint64_t now = 1;
  for (int step = 0; step < 4000; ++step, ++now) {
    if (!live.empty() && random() % 3 == 0) {
      size_t i = random() % live.size();
      EXPECT_EQ(one.remove(live[i].address, now).has_value(), sharded.remove(live[i].address, now).has_value());
      live.erase(live.begin() + i);
      continue;
    }
    uint64_t bytes = random() % 8 == 0 ? (random() % 200 + 1) * kMiB : (random() % 256 + 1) * 4096;
    uint64_t address = (random() % (2048 * kMiB / 4096)) * 4096;
    bool overlaps = false;
    for (const Live& l : live) overlaps |= address < l.address + l.bytes && l.address < address + bytes;
    if (overlaps) continue;
    EXPECT_EQ(one.add(address, bytes, AllocKind::PageableHost, -1, now),
              sharded.add(address, bytes, AllocKind::PageableHost, -1, now));
    live.push_back({address, bytes});
  }
  for (int query = 0; query < 20000; ++query) {
    uint64_t address = random() % (2300 * kMiB);
    uint64_t at = random() % (now + 1);
    auto expected = one.find(address, at);
    auto got = sharded.find(address, at);
    ASSERT_EQ(expected.has_value(), got.has_value()) << address << " at " << at;
    if (expected) EXPECT_EQ(expected->id, got->id);
    EXPECT_EQ(one.next_start(address, at), sharded.next_start(address, at));
  }
}

}  // namespace
}  // namespace apptracer
