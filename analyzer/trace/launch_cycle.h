// Steps of a program that marks none, found from what it launched: a training
// loop issues the same launches in the same order every step, so its launch
// sequence (a kernel's name, a copy's kind, in issue order) repeats.
//
// How: each launch symbol that occurs at least three times is a candidate
// anchor, the launch a step begins with. Its occurrences cut the sequence into
// segments (the last one runs to the end); a polynomial prefix hash gives each
// segment's content in O(1). The candidate's cycle is its most common segment.
// A candidate is a step's beginning when
//   - its cycle occurs at least twice exactly, and at least kMinSteps times
//     counting the steps that differ from it by a launch or two (a loss read
//     back every other step leaves half the steps exact copies; the last
//     segment, which runs to the end, is not counted);
//   - those steps hold at least kMinCycleShare of the launches from the first
//     to the end of the last (a layer of a network, which also repeats,
//     leaves backward and the optimizer out and falls short), and that loop
//     is at least kMinLoopShare of the launches from the first on (what
//     follows it, a tear-down, is smaller than the loop);
//   - no symbol occurs, over the cycle's steps (the anchor's segments from
//     the first copy on that are about a period long: exact copies, and
//     steps with a launch or two more or less; counted to the end of the
//     last of them, not into a tear-down), once a step more than the cycle
//     holds it (a kernel that occurs twice a step cannot cut it into two
//     "steps", whether the cycle misses it or begins with it).
// Of those, the ones whose steps cover the most launches (within 10%, or
// within one of the furthest-reaching cycle) are the program's loop, not a
// run of one launch at its end; among them the
// shortest cycle wins (a multiple of the step also repeats), then the one
// whose first copy begins earliest: the step boundary is the launch the
// steady cycle first begins with after start-up, and everything before that
// first copy is start-up. The anchor's occurrences after that are the steps,
// but for those that begin a segment under three quarters of a step (other
// work beginning as a step does, an evaluation's forward passes): part of the
// step before. Other work inside a step (an evaluation every few steps) makes
// its segment far longer than a step; one that holds the cycle with that work
// inserted still counts among the steps, and of cycles alike in reach and
// period, the one whose anchor the other work lacks (fewer segments far
// shorter than a step) wins: an anchor in the forward pass would make an
// evaluation after the last step look like a last step cut short.
//
// Linear in launches (each occurrence is looked at once, plus a check of a
// few best candidates). Limits: a step must contain some launch symbol
// exactly once; steps whose launches differ more often than not (data-
// dependent kernels in most steps) are not found; with gradient accumulation
// over more than four micro-batches a step is one micro-batch; an inference
// loop over many identical layers can be taken for one step per layer. Steps
// the program marks with NVTX (steps.h) are used instead wherever present.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace apptracer::trace {

inline constexpr size_t kMinSteps = 3;
inline constexpr double kMinCycleShare = 0.75;
inline constexpr double kMinLoopShare = 0.5;

struct LaunchCycle {
  size_t period = 0;           // launches in one steady step
  std::vector<size_t> starts;  // each step's first launch (an index into the sequence)
};

// The steps of `symbols` (one per launch, in issue order), from the first
// steady one; none when the sequence does not repeat.
std::optional<LaunchCycle> find_launch_cycle(const std::vector<int64_t>& symbols);

// Of steps given as [begin, end) index ranges into `symbols`, the first whose
// launches are the most common steps' launches, when at least two steps are
// alike; else 0. Steps before it are warm-up (first-time kernels, tuning).
size_t first_steady_step(const std::vector<int64_t>& symbols,
                         const std::vector<std::pair<size_t, size_t>>& steps);

}  // namespace apptracer::trace
