// What `apptracer links` measures on a machine, decided before touching a
// GPU (so it is tested on CPU and the progress bar knows the total):
//
//   per GPU and per NUMA node with memory: HtoD and DtoH, pageable and pinned
//   per GPU: DtoD; with managed memory: prefetch HtoD and DtoH, fault HtoD
//   per ordered GPU pair: PtoP staged, and PtoP peer where peer access works
//
// Sizes are log-spaced from 4 B to 256 MiB (every power of two; --quick:
// every 16th power, to 64 MiB), several repetitions each (medians are
// fitted). Managed paths start at one page: smaller prefetches and faults
// move a page anyway. --quick measures peer pairs with GPU 0 only.
//
// Then per GPU, pageable and pinned: HtoD and DtoH at the same time, at the
// largest size, from the GPU's closest node (where a well-placed program's
// buffers are): how much of each direction's bandwidth is left while the
// other runs (model::Duplex), for those two paths.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analyzer/model/link_path.h"
#include "analyzer/model/system_model.h"

namespace apptracer::links {

struct PlannedPath {
  model::LinkPath path;
  std::vector<int64_t> sizes;
  int repetitions = 0;
  int64_t samples() const { return static_cast<int64_t>(sizes.size()) * repetitions; }
};

struct PlanInput {
  std::vector<model::GpuInfo> gpus;
  std::vector<int> numa_nodes;               // nodes with memory; empty: unknown
  std::vector<model::GpuConnection> connections;  // peer_access per ordered pair
  std::vector<bool> managed;                 // per GPU (index = position in gpus)
  bool quick = false;
};

std::vector<PlannedPath> plan_paths(const PlanInput& input);

struct PlannedDuplex {
  int device = 0;
  int numa_node = -1;  // the host buffer's node, as in the paths' names
  model::HostMemory host = model::HostMemory::Pinned;
  int64_t bytes = 0;
  int copies = 0;  // timed per direction, alone and while the other runs
  // The two paths it gives a duplex factor.
  model::LinkPath htod() const { return {model::LinkKind::HtoD, host, numa_node, device, -1}; }
  model::LinkPath dtoh() const { return {model::LinkKind::DtoH, host, numa_node, device, -1}; }
  std::string name() const;  // "HtoD+DtoH.pinned.node0.gpu0"
  int64_t samples() const { return int64_t{4} * copies; }
};

std::vector<PlannedDuplex> plan_duplex(const PlanInput& input);

// The sizes measured (all paths start from these).
std::vector<int64_t> planned_sizes(bool quick);
int planned_repetitions(bool quick);

}  // namespace apptracer::links
