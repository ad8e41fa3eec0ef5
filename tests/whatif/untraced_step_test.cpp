// The factor --untraced-step fits: found in few replays where the step is
// about linear in it, the nearest side where it jumps, and out of reach
// said.
#include "analyzer/whatif/untraced_step.h"

#include <gtest/gtest.h>

#include <cstdint>

namespace apptracer::whatif {
namespace {

// A step of 1 ms of GPU work and 3 ms of host time, the host's share
// slightly bent (a wait that holds it up less as the host speeds up).
TEST(UntracedStepFit, AnAboutLinearStepIsFittedInFewReplays) {
  int replays = 0;
  auto step_ns = [&](double factor) {
    ++replays;
    return static_cast<int64_t>(1'000'000 + 3'000'000 * factor + 200'000 * factor * factor);
  };
  FittedHostTime fitted = fit_program_host_time(3'000'000, step_ns);
  EXPECT_TRUE(fitted.reached);
  EXPECT_NEAR(static_cast<double>(fitted.step_ns), 3'000'000, 3'000);
  EXPECT_NEAR(fitted.factor, 0.6394, 0.001);
  // Two for the bracket, then false position: bisection took 11 in all.
  EXPECT_LE(replays, 6) << replays;
}

TEST(UntracedStepFit, AStepThatJumpsPastTheTargetGetsTheNearerSide) {
  auto step_ns = [](double factor) -> int64_t { return factor < 0.5 ? 2'000'000 : 4'000'000; };
  FittedHostTime fitted = fit_program_host_time(3'100'000, step_ns);
  EXPECT_FALSE(fitted.reached);
  EXPECT_EQ(fitted.step_ns, 4'000'000);
  EXPECT_NEAR(fitted.factor, 0.5, 1e-5);
}

TEST(UntracedStepFit, ATargetOutOfRangeIsTheNearestEnd) {
  auto step_ns = [](double factor) { return static_cast<int64_t>(1'000'000 + 1'000'000 * factor); };
  FittedHostTime below = fit_program_host_time(500'000, step_ns);
  EXPECT_FALSE(below.reached);
  EXPECT_EQ(below.factor, 0);
  FittedHostTime above = fit_program_host_time(9'000'000, step_ns);
  EXPECT_FALSE(above.reached);
  EXPECT_EQ(above.factor, kMostHostScale);
}

}  // namespace
}  // namespace apptracer::whatif
