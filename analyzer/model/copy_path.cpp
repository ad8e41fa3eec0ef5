#include "analyzer/model/copy_path.h"

#include <algorithm>

namespace apptracer::model {

namespace {

std::optional<HostMemory> host_memory(MemoryKind kind, bool pin) {
  if (kind == MemoryKind::Pinned) return HostMemory::Pinned;
  if (kind == MemoryKind::Pageable) return pin ? HostMemory::Pinned : HostMemory::Pageable;
  return std::nullopt;
}

}  // namespace

std::optional<LinkPath> path_of_copy(const CopyEndpoints& copy, const Placement& placement) {
  auto node = [&](std::optional<int64_t> recorded) {
    if (placement.numa_node) return *placement.numa_node;
    return recorded ? static_cast<int>(*recorded) : -1;
  };
  switch (copy.kind) {
    case CopyKind::HtoD: {
      std::optional<HostMemory> host = host_memory(copy.src_memory, placement.pin);
      if (!host || !copy.dst_device) return std::nullopt;
      return LinkPath{LinkKind::HtoD, *host, node(copy.src_numa), static_cast<int>(*copy.dst_device), -1};
    }
    case CopyKind::DtoH: {
      std::optional<HostMemory> host = host_memory(copy.dst_memory, placement.pin);
      if (!host || !copy.src_device) return std::nullopt;
      if (host == HostMemory::Pageable && 2 * copy.dst_untouched_pages > copy.dst_sampled_pages) {
        host = HostMemory::Fresh;
      }
      return LinkPath{LinkKind::DtoH, *host, node(copy.dst_numa), static_cast<int>(*copy.src_device), -1};
    }
    case CopyKind::DtoD:
    case CopyKind::PtoP: {
      if (copy.src_memory == MemoryKind::Managed || copy.dst_memory == MemoryKind::Managed) return std::nullopt;
      std::optional<int64_t> src = copy.src_device ? copy.src_device : copy.dst_device;
      std::optional<int64_t> dst = copy.dst_device ? copy.dst_device : copy.src_device;
      if (!src) return std::nullopt;
      if (*src == *dst) return LinkPath{LinkKind::DtoD, HostMemory::None, -1, static_cast<int>(*src), -1};
      return LinkPath{LinkKind::PeerDirect, HostMemory::None, -1, static_cast<int>(*src), static_cast<int>(*dst)};
    }
    default: return std::nullopt;
  }
}

double pinned_copy_ns(double pinned_model_ns, double pageable_model_ns, double recorded_ns) {
  if (pageable_model_ns <= 0 || recorded_ns <= 0) return pinned_model_ns;
  return std::min(pinned_model_ns, pinned_model_ns * recorded_ns / pageable_model_ns);
}

}  // namespace apptracer::model
