// How long moving bytes along a path takes: the link model a diagnosis uses
// to estimate what a fix saves (t = c + bytes / BW(bytes) per path, Pearson's
// thesis ch. 3). Two implementations: the bandwidths measured in the trace
// itself (measured_transfer_cost.h) and a system file written by
// `apptracer links` (system_file_cost.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "analyzer/model/graph_launch.h"
#include "analyzer/model/tracing_cost.h"
#include "apptracer/enums.h"

namespace apptracer::diagnose {

// A logical communication path.
struct TransferPath {
  CopyKind kind = CopyKind::HtoD;  // HtoD, DtoH, DtoD, PtoP, HtoH
  // The host endpoint's memory for HtoD/DtoH (pageable, pinned, managed for
  // unified-memory migrations); device for device-to-device paths.
  MemoryKind host_memory = MemoryKind::Pinned;
  std::optional<int64_t> device;
  std::optional<int64_t> numa_node;  // the host endpoint's NUMA node, when it matters
};

std::string path_name(const TransferPath& path);

// A unified-memory migration's path: the managed-memory path of its
// direction and device (where prefetches are fitted and migrations drawn).
TransferPath migration_path(int64_t src_residency, int64_t dst_residency);

class TransferCost {
 public:
  virtual ~TransferCost() = default;
  // Predicted time to move `bytes` along `path`; nullopt when the model
  // knows nothing of that path.
  virtual std::optional<double> time_ns(const TransferPath& path, int64_t bytes) const = 0;
  // One line: where its numbers for `path` come from (or why it has none).
  virtual std::string describe(const TransferPath& path) const = 0;
  // What a CUDA graph's launch costs on the machine, as `apptracer links`
  // measured it; nullptr where nothing measured it (the trace's own
  // bandwidths, a system file without it).
  virtual const model::GraphLaunch* graph_launch() const { return nullptr; }
  // What tracing adds to a kernel launch on the machine, as `apptracer
  // links` measured it; nullptr where nothing measured it.
  virtual const model::TracingCost* tracing_cost() const { return nullptr; }
};

// One path's fit: t = latency + bytes / bandwidth (GB/s = bytes per ns).
struct LinkFit {
  double latency_ns = 0;
  double bandwidth_gbps = 0;
  double time_ns(int64_t bytes) const {
    return latency_ns + static_cast<double>(bytes) / bandwidth_gbps;
  }
};

// The time `bytes` take on a path's fit; nullopt for a path without one.
inline std::optional<double> time_on(const std::optional<LinkFit>& fit, int64_t bytes) {
  return fit ? std::optional<double>(fit->time_ns(bytes)) : std::nullopt;
}

}  // namespace apptracer::diagnose
