// An iterative program's steps: an NVTX range that repeats (a training
// loop's "step", "forward", ..., or "step 1", "step 2": one family,
// analyzer/trace/step_names.h) and, per occurrence, how long it lasted and
// how much GPU time the kernels and copies issued during it took. Two runs
// are compared step by step: the Nth step of A with the Nth of B.
#pragma once

#include <optional>
#include <string>

#include "analyzer/trace/trace.h"
#include "analyzer/diff/profile.h"

namespace apptracer::diff {

// The range family both traces repeat (at least twice each) that marks steps: one
// whose names carry numbers ("step 5") before others (a library's ranges, such
// as NCCL's, repeat more often), then the outermost (least nested), then the
// most repeated, then the longest in total in A. None when they repeat none.
std::optional<std::string> step_range(trace::Trace& a, trace::Trace& b);

// Measures "time_ns", "kernel_ns", "copy_ns" of each occurrence of the range
// family `name` (category "step", named "NAME N", N from 000001 in start order): of the
// first process that has it, in a merged trace.
Profile step_profile(trace::Trace& trace, const std::string& name);

}  // namespace apptracer::diff
