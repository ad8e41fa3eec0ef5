// Kernels' loads and stores over peer and host paths
// (trace/remote_kernel_traffic.h) priced in a what-if. A kernel's recorded
// duration holds its traffic over such a path; where the what-if prices
// the path differently from the baseline (--link, --system2, --numa), the
// kernel's duration changes by bytes / the what-if's bandwidth - bytes /
// the baseline's, and never drops below its time without that traffic.
// Kernels keep their recorded durations in the baseline, and in a what-if
// that leaves their paths as they were.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "analyzer/model/system_model.h"
#include "analyzer/trace/remote_kernel_traffic.h"
#include "analyzer/whatif/recorded.h"
#include "analyzer/whatif/whatif.h"

namespace apptracer::whatif {

// How one kernel's traffic over one path was priced.
struct TrafficPrice {
  std::string whatif_path;  // its path in the what-if
  std::string baseline_by;  // the measured paths that priced it; "" none
  std::string whatif_by;
  double baseline_ns = 0;  // bytes / bandwidth
  double whatif_ns = 0;
  bool priced() const { return !baseline_by.empty() && !whatif_by.empty(); }
};

class KernelTraffic {
 public:
  // `numa_node`: --numa, which moves pinned host memory too.
  KernelTraffic(std::vector<trace::RemoteTraffic> traffic, const model::SystemModel& baseline,
                const model::SystemModel& whatif, std::optional<int> numa_node);

  // The duration of kernel `kernel_id` (kernels.id), `own_ns` without this
  // change, with its traffic repriced.
  double kernel_ns(int64_t kernel_id, double own_ns) const;

  const std::vector<trace::RemoteTraffic>& traffic() const { return traffic_; }
  const std::vector<TrafficPrice>& prices() const { return prices_; }  // parallel to traffic()

 private:
  std::vector<trace::RemoteTraffic> traffic_;
  std::vector<TrafficPrice> prices_;
  // Per kernel: its priced traffic's time in the baseline and in the what-if.
  std::unordered_map<int64_t, std::pair<double, double>> kernels_;
};

// The transfers table's rows of kernel traffic, one per path, kind, pricing
// and whether the bytes are a bound: recorded, the sum of those kernels'
// durations (which hold the traffic); baseline and what-if, the traffic's
// time at each path's bandwidth (0 where none prices it).
std::vector<TransferSummary> kernel_traffic_summaries(const KernelTraffic& traffic, const ReplayInput& input,
                                                      const ReplayGraph& graph, const RecordedTiming& recorded);

// One line per system that prices no path of some kernels' traffic, and
// one when repriced bytes are bounds.
void add_kernel_traffic_notes(const KernelTraffic& traffic, const std::string& baseline_system,
                              const std::string& whatif_system, std::vector<std::string>& notes);

}  // namespace apptracer::whatif
