// The tracer's sampled self-cost (base/self_cost.h) and the tracer_time
// rows made of it (store/tracer_time_rows.h).
#include <gtest/gtest.h>

#include <thread>

#include "base/self_cost.h"
#include "store/tracer_time_rows.h"

namespace apptracer {
namespace {

using self_cost::Site;

// On a thread of its own (fresh sampling state): the first call is timed,
// then about one in kSampleEvery, never more than 2 * kSampleEvery - 1
// calls apart.
TEST(SelfCost, AboutOneCallInSampleEveryIsTimed) {
  constexpr int kCalls = 64'000;
  int timed = 0, longest = 0, since = 0;
  bool first_timed = false;
  std::thread([&] {
    first_timed = self_cost::timed_now(Site::HostFree);
    for (int i = 1; i < kCalls; ++i) {
      ++since;
      if (self_cost::timed_now(Site::HostFree)) {
        ++timed;
        longest = std::max(longest, since);
        since = 0;
      }
    }
  }).join();
  EXPECT_TRUE(first_timed);
  EXPECT_NEAR(timed, kCalls / self_cost::kSampleEvery, kCalls / self_cost::kSampleEvery / 10);
  EXPECT_LE(longest, static_cast<int>(2 * self_cost::kSampleEvery - 1));
}

// Sites count apart: one site's calls do not move another's turn.
TEST(SelfCost, EachSiteHasItsOwnTurn) {
  int range_timed = 0;
  std::thread([&] {
    for (int i = 0; i < 10'000; ++i) self_cost::timed_now(Site::HostAllocate);
    range_timed = self_cost::timed_now(Site::FrameworkRange);
  }).join();
  EXPECT_EQ(range_timed, 1);  // its first call
}

// A stretch gives rows once it is kStretchNs long, or when it is the last;
// each row holds what its site's totals gained in it.
TEST(TracerTimeRows, AStretchHoldsWhatTheTotalsGainedInIt) {
  constexpr uint64_t kStart = 1'000'000'000;
  TracerTimeRows rows(kStart);
  auto& range = self_cost::totals[self_cost::index(Site::FrameworkRange)];
  range.calls += 3;
  range.ns += 900;
  EXPECT_TRUE(rows.take(kStart + TracerTimeRows::kStretchNs - 1, false).empty());
  std::vector<TracerTimeRow> taken = rows.take(kStart + TracerTimeRows::kStretchNs, false);
  ASSERT_EQ(taken.size(), 1u);
  EXPECT_EQ(taken[0].site, TracerSite::FrameworkRange);
  EXPECT_EQ(taken[0].start_ns, static_cast<int64_t>(kStart));
  EXPECT_EQ(taken[0].end_ns, static_cast<int64_t>(kStart + TracerTimeRows::kStretchNs));
  EXPECT_EQ(taken[0].timed_calls, 3);
  EXPECT_EQ(taken[0].timed_ns, 900);
  EXPECT_EQ(taken[0].sample_every, static_cast<int64_t>(self_cost::kSampleEvery));
  range.calls += 1;
  range.ns += 100;
  taken = rows.take(kStart + TracerTimeRows::kStretchNs + 5, true);
  ASSERT_EQ(taken.size(), 1u);
  EXPECT_EQ(taken[0].start_ns, static_cast<int64_t>(kStart + TracerTimeRows::kStretchNs));
  EXPECT_EQ(taken[0].timed_calls, 1);
  EXPECT_TRUE(rows.take(kStart + 10 * TracerTimeRows::kStretchNs, true).empty());
}

}  // namespace
}  // namespace apptracer
