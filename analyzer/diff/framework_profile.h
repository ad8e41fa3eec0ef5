// A trace's work per PyTorch module (and phase) and per op, where it names
// them (framework context): how many kernels each launched and their GPU
// time, as `stats --report modules` and `--report ops` count them, so two
// runs of one model compare by the model's parts.
#pragma once

#include "analyzer/trace/trace.h"
#include "analyzer/diff/profile.h"

namespace apptracer::diff {

// Whether the trace names modules and ops at all.
bool names_modules_and_ops(trace::Trace& trace);

// Measures "launches", "time_ns"; categories "module" ("layer1.0.conv1
// (backward)", "(none)" for work of no module) and "op".
Profile framework_profile(trace::Trace& trace);

}  // namespace apptracer::diff
