#include "store/address_resolver.h"

#include <algorithm>

namespace apptracer {

AddressResolver::AddressResolver(const AllocationRegistry& cuda, HostBlockResolution host,
                                 std::function<void(const PromotedBlock&)> write_block)
    : cuda_(cuda), host_(std::move(host)), write_block_(std::move(write_block)) {}

Resolved AddressResolver::find(uint64_t address, uint64_t ns) const {
  Resolved out;
  if (address == 0) return out;
  std::optional<AllocationInfo> a = cuda_.find(address, ns);
  if (!a && host_.registry) a = host_.registry->find(address, ns);
  if (!a) return out;
  out.alloc_id = static_cast<int64_t>(a->id);
  out.offset = static_cast<int64_t>(address - a->address);
  out.alloc_bytes = static_cast<int64_t>(a->bytes);
  out.memory = memory_kind_of(a->kind);
  if (a->device >= 0) out.device = a->device;
  auto node = numa_nodes_.find(a->id);
  if (node != numa_nodes_.end() && node->second >= 0) out.numa_node = node->second;
  return out;
}

Resolved AddressResolver::touch(uint64_t address, uint64_t ns) {
  Resolved out = find(address, ns);
  if (out.alloc_id || address == 0 || !host_.promote) return out;
  if (std::optional<PromotedBlock> block = host_.promote(address, ns)) {
    write_block_(*block);
    out = find(address, ns);
  }
  return out;
}

void AddressResolver::touch_host_block(uint64_t address, uint64_t ns) {
  if (address == 0 || !host_.promote || (host_.registry && host_.registry->find(address, ns))) return;
  if (std::optional<PromotedBlock> block = host_.promote(address, ns)) write_block_(*block);
}

uint64_t AddressResolver::next_allocation_start(uint64_t address, uint64_t ns) const {
  uint64_t next = cuda_.next_start(address, ns);
  if (host_.registry) next = std::min(next, host_.registry->next_start(address, ns));
  return next;
}

void AddressResolver::remember_numa_node(uint64_t alloc_id, int numa_node) {
  numa_nodes_[alloc_id] = numa_node;
}

}  // namespace apptracer
