#include "exact/resource_allocations.h"

#include <sanitizer_callbacks.h>

namespace apptracer::exact {

bool is_peer_mapping(uint32_t flags) { return (flags & SANITIZER_MEMORY_FLAG_PEER) != 0; }

std::optional<AllocKind> allocation_kind(uint32_t flags, MemoryOrigin origin) {
  if ((flags & SANITIZER_MEMORY_FLAG_MODULE) || is_peer_mapping(flags)) return std::nullopt;
  if (flags & SANITIZER_MEMORY_FLAG_MANAGED) return AllocKind::Managed;
  if (flags & SANITIZER_MEMORY_FLAG_HOST_MAPPED) return AllocKind::MappedHost;
  if ((flags & SANITIZER_MEMORY_FLAG_HOST_PINNED) || origin == MemoryOrigin::PinnedHost) {
    return AllocKind::PinnedHost;
  }
  return origin == MemoryOrigin::StreamOrdered ? AllocKind::Pool : AllocKind::Device;
}

void record_allocation(RecordBuffers& buffers, AllocationRegistry& registry, uint64_t address,
                       uint64_t bytes, AllocKind kind, int32_t device, uint64_t ns) {
  bool host = memory_kind_of(kind) == MemoryKind::Pinned;
  Record r{};
  r.type = RecordType::Allocation;
  r.allocation.alloc_id = registry.add(address, bytes, kind, host ? -1 : device, ns);
  r.allocation.address = address;
  r.allocation.bytes = bytes;
  r.allocation.ns = ns;
  r.allocation.device = host ? -1 : device;
  r.allocation.kind = kind;
  buffers.append(r);
}

void record_free(RecordBuffers& buffers, AllocationRegistry& registry, uint64_t address,
                 uint64_t ns) {
  std::optional<AllocationInfo> freed = registry.remove(address, ns);
  if (!freed) return;
  Record r{};
  r.type = RecordType::Free;
  r.free.alloc_id = freed->id;
  r.free.ns = ns;
  buffers.append(r);
}

}  // namespace apptracer::exact
