// Steps found from a launch sequence alone: the period of what repeats, and
// where each step begins.
#include <gtest/gtest.h>

#include <random>

#include "analyzer/trace/launch_cycle.h"

namespace apptracer::trace {
namespace {

// `steps` copies of `step` after `startup`.
std::vector<int64_t> repeated(const std::vector<int64_t>& startup, const std::vector<int64_t>& step, size_t steps) {
  std::vector<int64_t> symbols = startup;
  for (size_t i = 0; i < steps; ++i) symbols.insert(symbols.end(), step.begin(), step.end());
  return symbols;
}

// A transformer-like step: the same layer six times forward, six times
// backward, then the optimizer. The layer repeats too, but a step is all of it.
TEST(LaunchCycle, AStepIsTheWholeCycleNotARepeatingLayer) {
  enum : int64_t { embed = 1, ln, attn, mlp, loss, ln_b, attn_b, mlp_b, adam_a, adam_b, init };
  std::vector<int64_t> step{embed};
  for (int layer = 0; layer < 6; ++layer) step.insert(step.end(), {ln, attn, mlp});
  step.push_back(loss);
  for (int layer = 0; layer < 6; ++layer) step.insert(step.end(), {mlp_b, attn_b, ln_b});
  step.insert(step.end(), {adam_a, adam_b});
  std::optional<LaunchCycle> cycle = find_launch_cycle(repeated({init, init, ln, init}, step, 40));
  ASSERT_TRUE(cycle);
  EXPECT_EQ(cycle->period, step.size());
  ASSERT_EQ(cycle->starts.size(), 40u);
  EXPECT_EQ(cycle->starts[0], 4u);  // the first embed after start-up
  EXPECT_EQ(cycle->starts[39], 4 + 39 * step.size());
}

// A kernel launched twice a step, 8 launches apart in a step of 10: its
// 8-launch segments are alike and hold 80% of the launches, but the last
// launch of each step would be in no such "step".
TEST(LaunchCycle, AKernelTwiceAStepDoesNotCutTheStepInTwo) {
  std::vector<int64_t> step{100, 1, 2, 3, 4, 5, 6, 7, 100, 8};
  std::optional<LaunchCycle> cycle = find_launch_cycle(repeated({}, step, 50));
  ASSERT_TRUE(cycle);
  EXPECT_EQ(cycle->period, 10u);
  EXPECT_EQ(cycle->starts.size(), 50u);
}

// Two memsets back to back end each step: the memset's segments alternate
// between nine launches and one, and the nine-launch ones hold 90% of the
// launches with every symbol in them, yet the step is ten launches.
TEST(LaunchCycle, ALaunchTwiceInARowDoesNotMakeAStepOfOne) {
  enum : int64_t { memset = 50 };
  std::vector<int64_t> step{1, 2, 3, 4, 5, 6, 7, 8, memset, memset};
  std::optional<LaunchCycle> cycle = find_launch_cycle(repeated({}, step, 50));
  ASSERT_TRUE(cycle);
  EXPECT_EQ(cycle->period, 10u);
  EXPECT_EQ(cycle->starts.size(), 50u);
}

// An extra kernel in every tenth step, and a last step cut short: still one
// step per cycle, and the cut one is a step.
TEST(LaunchCycle, OccasionalExtraLaunchesAndAPartialLastStepAreSteps) {
  std::vector<int64_t> step{10, 11, 12, 13, 14, 15, 16};
  std::vector<int64_t> symbols{1, 2, 3};
  for (int i = 0; i < 30; ++i) {
    symbols.insert(symbols.end(), step.begin(), step.begin() + 3);
    if (i % 10 == 4) symbols.push_back(99);
    symbols.insert(symbols.end(), step.begin() + 3, step.end());
  }
  symbols.insert(symbols.end(), step.begin(), step.begin() + 4);
  std::optional<LaunchCycle> cycle = find_launch_cycle(symbols);
  ASSERT_TRUE(cycle);
  EXPECT_EQ(cycle->period, step.size());
  EXPECT_EQ(cycle->starts.size(), 31u);
  EXPECT_EQ(cycle->starts.front(), 3u);
  EXPECT_EQ(cycle->starts.back(), symbols.size() - 4);
}

// A ViT-like step: twelve alike blocks (each kernel of a block twelve times a
// step), and the loss read back every tenth step. The read-back steps are not
// copies of the cycle, yet they are steps: a block's kernels, twelve a step,
// are no more frequent than the cycle holds them.
TEST(LaunchCycle, ALossReadBackEveryTenthStepKeepsEveryStep) {
  enum : int64_t { patch = 1, norm, qkv, attention, proj, mlp, loss, norm_b, qkv_b, attention_b, mlp_b, adam,
                   read_back };
  std::vector<int64_t> step{patch};
  for (int block = 0; block < 12; ++block) step.insert(step.end(), {norm, qkv, attention, proj, norm, mlp});
  step.push_back(loss);
  for (int block = 0; block < 12; ++block) step.insert(step.end(), {mlp_b, norm_b, attention_b, qkv_b, norm_b});
  step.push_back(adam);
  std::vector<int64_t> symbols{9, 9, 8};
  for (int i = 0; i < 40; ++i) {
    symbols.insert(symbols.end(), step.begin(), step.end());
    if (i % 10 == 0) symbols.push_back(read_back);
  }
  std::optional<LaunchCycle> cycle = find_launch_cycle(symbols);
  ASSERT_TRUE(cycle);
  EXPECT_EQ(cycle->period, step.size());
  // The steps begin with the first exact copy: the first step, which read
  // its loss back, is start-up's.
  ASSERT_EQ(cycle->starts.size(), 39u);
  EXPECT_EQ(cycle->starts[0], 3 + step.size() + 1);
}

// A loop that ends in a run of one launch (a framework moving the model back
// to the CPU, a copy per tensor): that run repeats too, with the shortest
// period, but it is the end of the run, not its steps.
TEST(LaunchCycle, ARunOfOneLaunchAtTheEndIsNotTheSteps) {
  std::vector<int64_t> step{10, 11, 12, 13, 12, 14, 15, 16};
  std::vector<int64_t> symbols = repeated({1, 2, 3}, step, 40);
  for (int i = 0; i < 30; ++i) symbols.push_back(99);
  std::optional<LaunchCycle> cycle = find_launch_cycle(symbols);
  ASSERT_TRUE(cycle);
  EXPECT_EQ(cycle->period, step.size());
  EXPECT_EQ(cycle->starts.size(), 40u);
}

// Training loops of many shapes, drawn from a fixed seed: a step of a head,
// 1-24 alike layers forward and backward and an optimizer's tail; 6-60 steps,
// a loss read back every 1-10 steps or never; random launches before the loop
// and a tear-down of copies after it. The steps are found, within a step at
// either end (start-up may end with the launch a step is taken to begin
// with), each a step long (with the read-back, where every step has one).
TEST(LaunchCycle, LoopsOfManyShapesAreFound) {
  std::mt19937 random(20261201);
  auto pick = [&](int64_t lo, int64_t hi) { return lo + static_cast<int64_t>(random() % (hi - lo + 1)); };
  int failures = 0;
  for (int loop = 0; loop < 500; ++loop) {
    int64_t layers = pick(1, 24), layer_length = pick(1, 8), tail = pick(0, 6);
    std::vector<int64_t> forward, backward;
    for (int64_t i = 0; i < layer_length; ++i) {
      forward.push_back(pick(1, 40));
      backward.push_back(pick(41, 80));
    }
    std::vector<int64_t> step{1000};
    for (int64_t l = 0; l < layers; ++l) step.insert(step.end(), forward.begin(), forward.end());
    step.push_back(1001);
    for (int64_t l = 0; l < layers; ++l) step.insert(step.end(), backward.begin(), backward.end());
    for (int64_t i = 0; i < tail; ++i) step.push_back(pick(81, 90));
    int64_t steps = pick(6, 60), read_back_every = pick(0, 10), startup = pick(0, 80), tear_down = pick(0, 60);
    std::vector<int64_t> symbols;
    for (int64_t i = 0; i < startup; ++i) symbols.push_back(pick(1, 2000));
    for (int64_t i = 0; i < steps; ++i) {
      symbols.insert(symbols.end(), step.begin(), step.end());
      if (read_back_every && i % read_back_every == 0) symbols.push_back(5000);
    }
    for (int64_t i = 0; i < tear_down; ++i) symbols.push_back(pick(0, 3) ? 6000 : 6001);
    std::optional<LaunchCycle> cycle = find_launch_cycle(symbols);
    size_t period = step.size() + (read_back_every == 1 ? 1 : 0);
    bool found = cycle && (cycle->period == period || (read_back_every > 1 && cycle->period == period + 1)) &&
                 cycle->starts.size() + 2 >= static_cast<size_t>(steps) &&
                 cycle->starts.size() <= static_cast<size_t>(steps) + 1;
    if (!found && ++failures <= 5) {
      ADD_FAILURE() << "loop " << loop << ": " << steps << " steps of " << period << " launches (" << layers
                    << " layers, read back every " << read_back_every << ", " << startup << " before, " << tear_down
                    << " after): " << (cycle ? std::to_string(cycle->starts.size()) + " steps of " +
                                                   std::to_string(cycle->period)
                                             : std::string("none"));
    }
  }
  EXPECT_EQ(failures, 0);
}

TEST(LaunchCycle, NoRepetitionIsNoSteps) {
  std::vector<int64_t> distinct;
  for (int64_t i = 0; i < 1000; ++i) distinct.push_back(i);
  EXPECT_FALSE(find_launch_cycle(distinct));
  EXPECT_FALSE(find_launch_cycle({}));
  // Twice is no pattern yet.
  EXPECT_FALSE(find_launch_cycle(repeated({}, {1, 2, 3}, 2)));
}

// A sequence that repeats only at the start is start-up, not steps.
TEST(LaunchCycle, RepetitionOnlyAtStartUpIsNoSteps) {
  std::vector<int64_t> symbols = repeated({}, {1, 2}, 5);
  for (int64_t i = 0; i < 200; ++i) symbols.push_back(100 + i);
  EXPECT_FALSE(find_launch_cycle(symbols));
}

TEST(LaunchCycle, WarmUpStepsAreThoseBeforeTheFirstUsualOne) {
  std::vector<int64_t> symbols{1, 9, 2, 1, 2, 1, 2, 1, 2};
  EXPECT_EQ(first_steady_step(symbols, {{0, 3}, {3, 5}, {5, 7}, {7, 9}}), 1u);
  // All different: none is usual, and none is warm-up.
  EXPECT_EQ(first_steady_step(symbols, {{0, 2}, {2, 5}}), 0u);
}

}  // namespace
}  // namespace apptracer::trace
