// The activity buffers handed to CUPTI: always zeroed (CUPTI is told so and
// no longer zeroes them in the program's threads), recycled, bounded.
#include "capture/activity_buffer_pool.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <vector>

namespace apptracer {
namespace {

constexpr size_t kBytes = ActivityBufferPool::kBufferBytes;

bool all_zero(const uint8_t* buffer) {
  return std::all_of(buffer, buffer + kBytes, [](uint8_t byte) { return byte == 0; });
}

TEST(ActivityBufferPool, AFreshBufferIsZeroed) {
  ActivityBufferPool pool;
  uint8_t* buffer = pool.take();
  ASSERT_NE(buffer, nullptr);
  EXPECT_TRUE(all_zero(buffer));
  pool.give_back(buffer, 0);
}

TEST(ActivityBufferPool, PrefilledBuffersAreTakenFirst) {
  ActivityBufferPool pool;
  pool.prefill(2);
  EXPECT_EQ(pool.kept(), 2);
  uint8_t* first = pool.take();
  uint8_t* second = pool.take();
  EXPECT_EQ(pool.kept(), 0);
  EXPECT_NE(first, second);
  EXPECT_TRUE(all_zero(first) && all_zero(second));
  pool.give_back(first, 0);
  pool.give_back(second, 0);
}

TEST(ActivityBufferPool, AGivenBackBufferIsZeroedWhereWrittenAndReused) {
  ActivityBufferPool pool;
  uint8_t* buffer = pool.take();
  std::memset(buffer, 0xab, 100000);  // records CUPTI wrote
  pool.give_back(buffer, 100000);
  EXPECT_EQ(pool.kept(), 1);
  uint8_t* again = pool.take();
  EXPECT_EQ(again, buffer);
  EXPECT_TRUE(all_zero(again));
  pool.give_back(again, 0);
}

TEST(ActivityBufferPool, KeepsAtMostItsSlots) {
  ActivityBufferPool pool;
  std::vector<uint8_t*> taken;
  for (int i = 0; i < ActivityBufferPool::kSlots + 3; ++i) taken.push_back(pool.take());
  for (uint8_t* buffer : taken) pool.give_back(buffer, kBytes);
  EXPECT_EQ(pool.kept(), ActivityBufferPool::kSlots);
  pool.prefill(1);  // no slot left: nothing more is mapped and kept
  EXPECT_EQ(pool.kept(), ActivityBufferPool::kSlots);
}

}  // namespace
}  // namespace apptracer
