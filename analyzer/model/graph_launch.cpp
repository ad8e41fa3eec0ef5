#include "analyzer/model/graph_launch.h"

#include "analyzer/model/median.h"

#include <algorithm>
#include <stdexcept>

namespace apptracer::model {

double GraphLaunch::launch_host_ns(int64_t nodes) const {
  return launch_ns + launch_ns_per_node * static_cast<double>(std::max<int64_t>(nodes, 0));
}

GraphLaunch fit_graph_launch(int gpu, std::vector<GraphLaunchSamples> samples) {
  std::vector<double> gaps;
  std::vector<const GraphLaunchSamples*> timed;
  for (const GraphLaunchSamples& size : samples) {
    gaps.insert(gaps.end(), size.node_ns.begin(), size.node_ns.end());
    if (!size.launch_ns.empty()) timed.push_back(&size);
  }
  if (gaps.empty() || timed.empty()) {
    throw std::invalid_argument("graph launch measurements hold no repetition");
  }
  std::sort(timed.begin(), timed.end(), [](const auto* a, const auto* b) { return a->nodes < b->nodes; });
  GraphLaunch out;
  out.gpu = gpu;
  out.node_ns = std::max(0.0, median(gaps));
  double small = median(timed.front()->launch_ns), large = median(timed.back()->launch_ns);
  int64_t span = timed.back()->nodes - timed.front()->nodes;
  if (span > 0) {
    out.launch_ns_per_node = std::max(0.0, (large - small) / static_cast<double>(span));
  }
  out.launch_ns =
      std::max(0.0, small - out.launch_ns_per_node * static_cast<double>(timed.front()->nodes));
  out.samples = std::move(samples);
  return out;
}

}  // namespace apptracer::model
