// Measuring what a CUDA graph's launch costs (model/graph_launch.h) on one
// GPU: a chain of N apptracer_stamp kernels (kernels.ptx) captured from a
// stream into a graph, instantiated once and launched again and again. Per
// launch, the host's time in cuGraphLaunch, and from the stamps each kernel
// wrote, the mean of the GPU's idle time from one node's end to the next
// one's start. Two sizes: the host's cost grows with the nodes.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "analyzer/links/cuda_driver.h"
#include "analyzer/links/link_bench.h"
#include "analyzer/model/graph_launch.h"

namespace apptracer::links {

// The graph sizes measured, and launches timed per size.
std::vector<int64_t> graph_sizes();
int graph_repetitions(bool quick);

// `on_sample` is called after each timed launch (graph_sizes().size() *
// graph_repetitions(quick) in all). Throws DriverError.
model::GraphLaunch measure_graph_launch(const CudaDriver& driver, GpuSession& session, bool quick,
                                        const std::function<void()>& on_sample);

}  // namespace apptracer::links
