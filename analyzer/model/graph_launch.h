// What launching work as a CUDA graph costs on a machine, as `apptracer
// links` measures it on its first GPU: a graph of N kernel nodes in a chain
// (each node after the previous one), launched again and again.
//
//  * node_ns: the GPU's idle time between two dependent kernel nodes, from
//    the end of one node's work to the start of the next one's, as the
//    kernels see it (each stamps %globaltimer as it starts and ends). A
//    replay of a trace adds it between captured kernels, whose recorded
//    durations are their own work.
//  * launch_ns + launch_ns_per_node * N: the host's time in cuGraphLaunch
//    for a graph of N nodes, fitted through the medians at two sizes.
#pragma once

#include <cstdint>
#include <vector>

namespace apptracer::model {

// Where no system file measured it, these are assumed, and every output
// using them says so: `apptracer links` measures both.
inline constexpr double kAssumedGraphNodeNs = 1000;
inline constexpr double kAssumedGraphLaunchNs = 2500;

// The repetitions measured with one graph size.
struct GraphLaunchSamples {
  int64_t nodes = 0;
  std::vector<double> node_ns;    // per repetition: the mean idle time between its nodes
  std::vector<double> launch_ns;  // per repetition: the host's time in cuGraphLaunch
};

struct GraphLaunch {
  int gpu = 0;                    // the GPU measured
  double node_ns = 0;             // GPU idle time between two dependent nodes
  double launch_ns = 0;           // cuGraphLaunch's host time: fixed part,
  double launch_ns_per_node = 0;  // ... and per node
  std::vector<GraphLaunchSamples> samples;  // may be empty in a hand-written file

  // The host's time to launch a graph of `nodes` nodes.
  double launch_host_ns(int64_t nodes) const;
};

// The model from measurements: node_ns is the median of every repetition's
// mean; the launch cost is the line through the smallest and the largest
// size's medians (the fixed part at least 0, the slope at least 0; one size:
// all of it fixed). Throws std::invalid_argument when `samples` holds no
// repetition.
GraphLaunch fit_graph_launch(int gpu, std::vector<GraphLaunchSamples> samples);

}  // namespace apptracer::model
