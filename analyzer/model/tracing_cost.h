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
// Between launches the loop does a program's work: dependent loads and
// stores through a buffer the size of the core's L2 cache (`work_bytes`), as
// a framework's host code between its launches fills the caches. So the
// launch calls run with CUPTI's and the tracer's code and data evicted, as in
// a real program, and the work runs slower traced, its lines evicted by
// theirs: a cost no callback time shows (`work_added_ns`). A loop of launches
// alone measured 2.75 us a launch of CUPTI's where a PyTorch step's launches
// cost the program 1.4 us more than that and the callbacks.
//
// The loop's child also writes a trace, whose tracer_time says how much of
// the calls' cost was the tracer's own callbacks (`callbacks_ns`); the rest is
// CUPTI's dispatch around them. The split matters because the tracer's part
// differs from program to program and each trace measures its own: pricing
// then takes the rest from here and the tracer's part from the trace.
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
  // The work between two launches, as the calls' times (0: not measured,
  // system files before links did work between launches).
  double work_bytes = 0;
  double untraced_work_ns = 0, full_work_ns = 0, timing_work_ns = 0;
  std::vector<double> untraced_work_samples, full_work_samples, timing_work_samples;
  // The tracer's own callbacks in each traced launch, by level, from the
  // child's tracer_time (0: not measured, system files before links split it).
  double full_callbacks_ns = 0;
  double timing_callbacks_ns = 0;
  std::vector<double> full_callbacks_samples, timing_callbacks_samples;

  // What tracing at `level` adds to each launch: to the call, and to the
  // program's work before the next (work_added_ns); at least 0.
  double added_ns(TracingLevel level) const;
  // What it adds to the call alone, at least 0.
  double call_added_ns(TracingLevel level) const;
  // How much slower the work between two launches ran, at least 0.
  double work_added_ns(TracingLevel level) const;
  // Whether the tracer's part of it was measured.
  bool callbacks_measured() const { return full_callbacks_ns > 0 || timing_callbacks_ns > 0; }
  // added_ns less the tracer's callbacks (CUPTI's dispatch, and the work
  // slowed), at least 0.
  double beyond_callbacks_ns(TracingLevel level) const;
  // What beyond_callbacks_ns holds, in words: "CUPTI's dispatch" and,
  // where measured, the slower work.
  std::string beyond_callbacks_what() const;
  // Each level's median of its rounds' callback times (empty: not measured).
  void fit_callbacks(std::vector<double> full, std::vector<double> timing);
  // Each run's median of its rounds' work times, doing `bytes` a launch.
  // Throws std::invalid_argument unless every run has as many rounds as the calls'.
  void fit_work(double bytes, std::vector<double> untraced, std::vector<double> full, std::vector<double> timing);
};

// The model from the rounds' samples: each level's median. Throws
// std::invalid_argument when a level has no sample.
TracingCost fit_tracing_cost(int gpu, std::vector<double> untraced, std::vector<double> full,
                             std::vector<double> timing);

}  // namespace apptracer::model
