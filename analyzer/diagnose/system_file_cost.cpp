#include "analyzer/diagnose/system_file_cost.h"

#include <cstdio>

#include "analyzer/model/copy_path.h"
#include "analyzer/model/system_file.h"

namespace apptracer::diagnose {

namespace {

// A host copy as the trace records it (host memory other than pageable
// counts as pinned; GPU 0 where none is known).
model::CopyEndpoints host_copy(const TransferPath& path) {
  MemoryKind host = path.host_memory == MemoryKind::Pageable ? MemoryKind::Pageable : MemoryKind::Pinned;
  int64_t device = path.device.value_or(0);
  model::CopyEndpoints copy;
  copy.kind = path.kind;
  if (path.kind == CopyKind::HtoD) {
    copy.src_memory = host;
    copy.dst_memory = MemoryKind::Device;
    copy.dst_device = device;
    copy.src_numa = path.numa_node;
  } else {
    copy.src_memory = MemoryKind::Device;
    copy.dst_memory = host;
    copy.src_device = device;
    copy.dst_numa = path.numa_node;
  }
  return copy;
}

}  // namespace

std::optional<model::LinkPath> link_path_of(const TransferPath& path) {
  model::LinkPath link;
  link.device = static_cast<int>(path.device.value_or(0));
  link.numa_node = static_cast<int>(path.numa_node.value_or(-1));
  bool to_device = path.kind == CopyKind::HtoD;
  switch (path.kind) {
    case CopyKind::HtoD:
    case CopyKind::DtoH:
      if (path.host_memory == MemoryKind::Managed) {
        // Managed memory moved ahead of use: the prefetch path.
        link.kind = to_device ? model::LinkKind::PrefetchHtoD : model::LinkKind::PrefetchDtoH;
        link.numa_node = -1;
        return link;
      }
      // The path whatif takes for the same copy: one path model for both.
      return model::path_of_copy(host_copy(path));
    case CopyKind::DtoD:
      link.kind = model::LinkKind::DtoD;
      link.numa_node = -1;
      return link;
    case CopyKind::PtoP:
      // The trace does not say whether peer access was on: the direct path,
      // which resolve() prices for the GPU pair closest to this one.
      link.kind = model::LinkKind::PeerDirect;
      link.numa_node = -1;
      return link;
    default:
      return std::nullopt;
  }
}

SystemFileCost::SystemFileCost(const std::string& path)
    : source_(path), system_(model::load_system(path)) {}

SystemFileCost::SystemFileCost(std::string source, model::SystemModel system)
    : source_(std::move(source)), system_(std::move(system)) {}

std::optional<double> SystemFileCost::time_ns(const TransferPath& path, int64_t bytes) const {
  std::optional<model::LinkPath> link = link_path_of(path);
  if (!link) return std::nullopt;
  return system_.transfer_ns(*link, bytes);
}

std::string SystemFileCost::describe(const TransferPath& path) const {
  std::optional<model::LinkPath> link = link_path_of(path);
  model::ResolvedPath resolved = link ? system_.resolve(*link) : model::ResolvedPath{};
  if (!resolved.path) return "system file " + source_ + " has no " + path_name(path) + " path";
  const model::LinkModel& fit = resolved.path->model;
  char numbers[96];
  std::snprintf(numbers, sizeof numbers, "%.2f GB/s peak, %.1f us latency", fit.peak_gbps(),
                fit.latency_ns() / 1000);
  std::string name = resolved.path->path.name();
  return "system file " + source_ + ", path " + name +
         (resolved.exact ? "" : " (closest measured to " + link->name() + ")") + ": " + numbers;
}

const model::GraphLaunch* SystemFileCost::graph_launch() const {
  return system_.graph_launch ? &*system_.graph_launch : nullptr;
}

const model::TracingCost* SystemFileCost::tracing_cost() const {
  return system_.tracing_cost ? &*system_.tracing_cost : nullptr;
}

}  // namespace apptracer::diagnose
