// The freed history (tracer/buffer/freed_history.h) the allocation registry
// and the host blocks keep ended allocations in: indexed by start address at
// the first lookup, forgotten oldest first.
#include "buffer/freed_history.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace apptracer {
namespace {

struct Ended {
  uint64_t free_ns;
};

TEST(FreedHistory, AddedEntriesAreIndexedByAddressAndForgottenOldestFirst) {
  FreedHistory<Ended> history;
  ASSERT_TRUE(history.add(0x3000, Ended{10}));
  ASSERT_TRUE(history.add(0x1000, Ended{20}));
  FreedHistory<Ended>::Index& index = history.indexed();
  ASSERT_EQ(index.size(), 2u);
  EXPECT_EQ(index.begin()->first, 0x1000u) << "by start address";
  ASSERT_TRUE(history.add(0x1000, Ended{30}));  // the address reused, freed again
  std::vector<uint64_t> forgotten;
  history.forget_before(25, [&](const Ended& e) { forgotten.push_back(e.free_ns); });
  EXPECT_EQ(forgotten, (std::vector<uint64_t>{10, 20})) << "oldest first, the younger kept";
  FreedHistory<Ended>::Index& left = history.indexed();
  ASSERT_EQ(left.size(), 1u);
  EXPECT_EQ(left.begin()->second.free_ns, 30u);
  ASSERT_TRUE(history.add(0x5000, Ended{35}));
  history.forget_before(40, [&](const Ended& e) { forgotten.push_back(e.free_ns); });
  EXPECT_EQ(forgotten, (std::vector<uint64_t>{10, 20, 30, 35}))
      << "one not indexed yet is forgotten too";
  EXPECT_TRUE(history.indexed().empty());
}

}  // namespace
}  // namespace apptracer
