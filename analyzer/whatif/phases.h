// The parts of a run a result is broken down by, each recorded and predicted:
//
//  * NVTX ranges, where the trace has them (XLA's own, a thunk's or a compiler
//    pass's, are not read: replay_input): per range name, the sum of its
//    ranges' lengths. A range's ends are instants of its thread's host time
//    line; replayed, an instant moves with the calls around it (one between
//    two calls stays as far after the first as it was, never past the second);
//  * otherwise periods of the thread that made the first call: from the
//    start to the end of its first synchronization (device, stream or event),
//    from there to the end of the next, ..., and from the last to the end of
//    the run. A program that synchronizes between its phases gets one period
//    per phase. More than kMaxPeriods periods are merged into that many runs
//    of consecutive ones.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analyzer/trace/steps.h"
#include "analyzer/whatif/replay_input.h"
#include "analyzer/whatif/replay_timeline.h"

namespace apptracer::whatif {

inline constexpr size_t kMaxPeriods = 16;

struct Phase {
  std::string name;    // the NVTX range's name, or "period N" / "periods N-M"
  std::string kind;    // "nvtx" or "period"
  std::string detail;  // periods: "until cudaDeviceSynchronize" or "until the end"
  int64_t count = 0;   // ranges (or periods) it sums
  std::vector<int64_t> ns;  // its length in each timeline given, in order
};

// `timelines` are replays of the same input (the recording included, as a
// timeline of recorded times); each phase gets one length per timeline.
std::vector<Phase> phases(const ReplayInput& input, const std::vector<const Timeline*>& timelines);

// The steady steps (steps.h) as one phase, kind "steps": from the first
// one's start to the last one's end, instants of the thread that made the
// first call, or to the end of the last work they issued where that is
// later (a host that runs ahead of its GPU, as one launching graphs does,
// has not finished its steps until the GPU has). Nothing where the process
// has no steady step.
std::vector<Phase> steps_phase(const ReplayInput& input, const trace::ProcessSteps* steps,
                               const std::vector<const Timeline*>& timelines);

}  // namespace apptracer::whatif
