// The chunked log (tracer/buffer/chunked_log.h) the allocator hooks append
// frees to: first in, first out across chunk boundaries, chunks reused.
#include "buffer/chunked_log.h"

#include <gtest/gtest.h>

#include <cstdint>

namespace apptracer {
namespace {

TEST(ChunkedLog, PopsInPushOrderAcrossChunks) {
  ChunkedLog<uint64_t, 4> log;  // small chunks: boundaries every few entries
  EXPECT_TRUE(log.empty());
  uint64_t pushed = 0;
  uint64_t popped = 0;
  // Interleaved, so the head chunk empties while the tail fills.
  for (int round = 0; round < 50; ++round) {
    for (int i = 0; i < 7; ++i) ASSERT_TRUE(log.push(pushed++));
    for (int i = 0; i < 5; ++i, log.pop_front()) ASSERT_EQ(log.front(), popped++);
  }
  for (; !log.empty(); log.pop_front()) ASSERT_EQ(log.front(), popped++);
  EXPECT_EQ(popped, pushed);
  EXPECT_TRUE(log.push(7)) << "usable again once emptied";
  EXPECT_EQ(log.front(), 7u);
  log.clear();
  EXPECT_TRUE(log.empty());
}

}  // namespace
}  // namespace apptracer
