// What tracing adds to a kernel launch's host time on a machine, as
// `apptracer links` measures it: the same loop of launches run untraced and
// under the tracer at each level `apptracer record` offers. A trace's host
// times hold that cost on every launch call; a saving priced from a traced
// step would count it as if the fix removed it too. Where the system file has
// it, diagnose and whatif take it off each launch call of the trace first, so
// savings are priced against the untraced program.
//
// The loop launches through the runtime (cudaLaunchKernel) as frameworks do,
// or through the driver where no runtime library is installed (one CUPTI
// callback fewer per launch); the tracer's costs beyond launches (framework
// and host allocator hooks) are not in it, so what is taken off is a lower
// bound.
//
// The loop's child also writes a trace, whose tracer_time says how much of
// that cost was the tracer's own callbacks (`callbacks_ns`); the rest is
// CUPTI's dispatch around them. The split matters because the tracer's part
// grows in a real program (its code and data out of cache between launches:
// 1.35 us a launch on a PyTorch step where the warm loop's whole cost was
// 1.46 us) and each trace measures its own: pricing then takes CUPTI's part
// from here and the tracer's from the trace.
#pragma once

#include <string>
#include <vector>

namespace apptracer::model {

// The levels of `apptracer record --level`.
enum class TracingLevel { Full, Timing };

// The level a trace was recorded at, from its meta `options`
// (tracer/base/config.h's description: "kernel_arguments=off" at timing level).
TracingLevel tracing_level_of(const std::string& options);
const char* to_string(TracingLevel level);

struct TracingCost {
  int gpu = 0;
  std::string api = "cuLaunchKernel";  // the launch call timed
  double untraced_ns = 0;  // host time of one launch call, untraced
  double full_ns = 0;      // ... traced at the default level
  double timing_ns = 0;    // ... traced with --level timing
  // Per round, interleaved: untraced, full, timing (kept to show the spread).
  std::vector<double> untraced_samples, full_samples, timing_samples;
  // The tracer's own callbacks in each traced launch, by level, from the
  // child's tracer_time (0: not measured, system files before links split it).
  double full_callbacks_ns = 0;
  double timing_callbacks_ns = 0;
  std::vector<double> full_callbacks_samples, timing_callbacks_samples;

  // What tracing at `level` adds to each launch call, at least 0.
  double added_ns(TracingLevel level) const;
  // Whether the tracer's part of it was measured.
  bool callbacks_measured() const { return full_callbacks_ns > 0 || timing_callbacks_ns > 0; }
  // CUPTI's part of added_ns: less the tracer's callbacks, at least 0.
  double cupti_added_ns(TracingLevel level) const;
  // Each level's median of its rounds' callback times (empty: not measured).
  void fit_callbacks(std::vector<double> full, std::vector<double> timing);
};

// The model from the rounds' samples: each level's median. Throws
// std::invalid_argument when a level has no sample.
TracingCost fit_tracing_cost(int gpu, std::vector<double> untraced, std::vector<double> full,
                             std::vector<double> timing);

}  // namespace apptracer::model
