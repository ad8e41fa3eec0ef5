// Whether CUPTI and the Compute Sanitizer work together in one process here
// (nothing NVIDIA documents): `record --exact` first runs a small program
// (probe.cu: two kernels with known accesses) under the tracer
// in one-run exact mode, and judges the trace it wrote. One run when the
// trace has every CUPTI row (calls, kernels, GPU times) and every exact
// range right, joined by correlation id; two runs otherwise; unavailable
// when the sanitizer cannot be used at all.
#pragma once

#include <string>

#include "apptracer/sqlite.h"

namespace apptracer {

enum class ExactPath { OneRun, TwoRuns, Unavailable };

struct ProbeVerdict {
  ExactPath path = ExactPath::TwoRuns;
  std::string reason;  // one line
};

ProbeVerdict judge_probe_trace(Database& trace);

// The size of each of the probe's two buffers (probe.cu).
inline constexpr int kProbeBytes = 4096;

}  // namespace apptracer
