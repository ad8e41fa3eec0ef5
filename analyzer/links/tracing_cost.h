// Measuring what tracing adds to a kernel launch (model/tracing_cost.h):
// this apptracer runs itself again as a child (`links --launch-loop`) that
// times batches of launches of the stamp kernel (kernels.ptx) on one GPU,
// through the runtime as frameworks launch (else the driver), and prints
// the median host time per launch; the child runs
// untraced, under the tracer at the default level and at --level timing,
// in interleaved rounds, each in a fresh process as a traced program is.
#pragma once

#include <functional>
#include <string>

#include "analyzer/links/cuda_driver.h"
#include "analyzer/model/tracing_cost.h"
#include "analyzer/trace/trace.h"

namespace apptracer::links {

// Rounds of the three runs.
int tracing_cost_rounds(bool quick);

// The child's work: the median host time of one launch on GPU `gpu`, in
// ns, through the runtime (cudaLaunchKernel of a kernel from
// cudaLibraryLoadData) where libcudart is installed, else the driver.
struct LaunchLoop {
  double ns = 0;
  std::string api;  // "cudaLaunchKernel" or "cuLaunchKernel"
};
LaunchLoop launch_loop_ns(const CudaDriver& driver, int gpu);

// The tracer's own callbacks per call in a traced launch loop's trace, from
// its tracer_time: the stretches holding at least two
// batches' calls (the loop idles before and after its timed batches, so
// those stretches hold them alone: launches, and one synchronization a
// batch). 0 where the trace has no such stretch (a tracer from before
// tracer_time).
double loop_callbacks_ns(trace::Trace& trace);

// `library`: libapptracer.so. `on_sample` is called after each child run
// (3 * tracing_cost_rounds(quick) in all). Throws std::runtime_error naming
// the run that failed.
model::TracingCost measure_tracing_cost(const std::string& library, int gpu, bool quick,
                                        const std::function<void()>& on_sample);

}  // namespace apptracer::links
