#include "analyzer/links/path_plan.h"

namespace apptracer::links {

namespace {

using model::HostMemory;
using model::LinkKind;
using model::LinkPath;

constexpr int64_t kSmallest = 4;
constexpr int64_t kLargest = int64_t{256} << 20;
constexpr int64_t kLargestQuick = int64_t{64} << 20;
// --quick steps by 16 up to this size, then by 4: a copy's time bends
// between 256 KiB and 4 MiB (latency-bound to bandwidth-bound, and the
// driver's staging buffer for pageable memory), and a 1 MiB copy priced
// between those two samples was off by half on an H200.
constexpr int64_t kQuickFineFrom = int64_t{256} << 10;
constexpr int64_t kPage = 4096;
// Copies timed per direction in a duplex measurement; the first of each is
// left out (the other direction may not have started yet). A few are
// enough: at the largest size each copy takes milliseconds.
constexpr int kDuplexCopies = 8;
constexpr int kDuplexCopiesQuick = 5;

std::vector<int64_t> from(const std::vector<int64_t>& sizes, int64_t smallest) {
  std::vector<int64_t> kept;
  for (int64_t size : sizes) {
    if (size >= smallest) kept.push_back(size);
  }
  return kept;
}

}  // namespace

std::vector<int64_t> planned_sizes(bool quick) {
  std::vector<int64_t> sizes;
  for (int64_t size = kSmallest; size <= (quick ? kLargestQuick : kLargest);
       size *= !quick ? 2 : size < kQuickFineFrom ? 16 : 4) {
    sizes.push_back(size);
  }
  return sizes;
}

int planned_repetitions(bool quick) { return quick ? 3 : 5; }

std::vector<PlannedPath> plan_paths(const PlanInput& input) {
  std::vector<int64_t> sizes = planned_sizes(input.quick);
  int repetitions = planned_repetitions(input.quick);
  std::vector<PlannedPath> plan;
  auto add = [&](const LinkPath& path, const std::vector<int64_t>& path_sizes) {
    plan.push_back({path, path_sizes, repetitions});
  };
  std::vector<int> nodes = input.numa_nodes;
  if (nodes.empty()) nodes.push_back(-1);
  // Node by node: the measuring allocates one node's host buffer at a time.
  for (int node : nodes) {
    for (const model::GpuInfo& gpu : input.gpus) {
      for (HostMemory host : {HostMemory::Pageable, HostMemory::Fresh, HostMemory::Pinned}) {
        for (LinkKind kind : {LinkKind::HtoD, LinkKind::DtoH}) {
          // Only a write makes a page: a copy from untouched memory has none to fault in.
          if (host == HostMemory::Fresh && kind == LinkKind::HtoD) continue;
          add({kind, host, node, gpu.ordinal, -1}, sizes);
        }
      }
    }
  }
  for (size_t i = 0; i < input.gpus.size(); ++i) {
    int device = input.gpus[i].ordinal;
    add({LinkKind::DtoD, HostMemory::None, -1, device, -1}, sizes);
    if (i < input.managed.size() && input.managed[i]) {
      add({LinkKind::PrefetchHtoD, HostMemory::None, -1, device, -1}, from(sizes, kPage));
      add({LinkKind::PrefetchDtoH, HostMemory::None, -1, device, -1}, from(sizes, kPage));
      add({LinkKind::FaultHtoD, HostMemory::None, -1, device, -1}, from(sizes, kPage));
    }
  }
  for (const model::GpuConnection& connection : input.connections) {
    if (connection.gpu == connection.peer) continue;
    if (input.quick && connection.gpu != 0 && connection.peer != 0) continue;
    add({LinkKind::PeerStaged, HostMemory::None, -1, connection.gpu, connection.peer}, sizes);
    if (connection.peer_access) {
      add({LinkKind::PeerDirect, HostMemory::None, -1, connection.gpu, connection.peer}, sizes);
    }
  }
  return plan;
}

std::string PlannedDuplex::name() const {
  std::string one = htod().name();
  return "HtoD+DtoH" + one.substr(one.find('.'));
}

std::vector<PlannedDuplex> plan_duplex(const PlanInput& input) {
  std::vector<PlannedDuplex> plan;
  for (const model::GpuInfo& gpu : input.gpus) {
    // The GPU's own node where it was measured, else the node its host paths
    // were first measured on.
    int node = input.numa_nodes.empty() ? -1 : input.numa_nodes.front();
    for (int candidate : input.numa_nodes) {
      if (candidate == gpu.numa_node) node = candidate;
    }
    for (HostMemory host : {HostMemory::Pageable, HostMemory::Pinned}) {
      plan.push_back({gpu.ordinal, node, host, planned_sizes(input.quick).back(),
                      input.quick ? kDuplexCopiesQuick : kDuplexCopies});
    }
  }
  return plan;
}

}  // namespace apptracer::links
