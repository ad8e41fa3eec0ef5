// Which allocation held an address at a time, as the writer resolves copy
// endpoints, memset targets, kernel arguments and unified-memory records.
// CUDA's allocations first (registered or pinned host memory is also a host
// block: CUDA's view wins), then host blocks that are rows, then a host
// block CUDA touches for the first time, which becomes a row now.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <unordered_map>

#include "apptracer/records.h"
#include "buffer/allocation_registry.h"
#include "buffer/promoted_block.h"

namespace apptracer {

// Host blocks (host/host_blocks.h): where they resolve once they are rows,
// and how one becomes a row when CUDA touches it.
struct HostBlockResolution {
  const AllocationRegistry* registry = nullptr;
  // The block that held `address` at `ns` (live or freed since), if it is
  // not a row yet.
  std::function<std::optional<PromotedBlock>(uint64_t address, uint64_t ns)> promote;
  // No touch still to be resolved was entered before `ns` (freed blocks
  // older than that can go).
  std::function<void(uint64_t ns)> forget_freed_before;
};

struct Resolved {
  std::optional<int64_t> alloc_id;
  std::optional<int64_t> offset;
  MemoryKind memory = MemoryKind::Unknown;
  std::optional<int64_t> device;
  std::optional<int64_t> numa_node;  // host memory: of the allocation, read when it became a row
  std::optional<int64_t> alloc_bytes;  // the allocation's size
};

class AddressResolver {
 public:
  // `write_block` stores a promoted host block's row.
  AddressResolver(const AllocationRegistry& cuda, HostBlockResolution host,
                  std::function<void(const PromotedBlock&)> write_block);

  // In a known allocation or host row, without promoting anything.
  Resolved find(uint64_t address, uint64_t ns) const;
  // The same; an address in no allocation but in a host block the program
  // allocated before `ns` makes that block a row (CUDA touched it).
  Resolved touch(uint64_t address, uint64_t ns);
  // The host block holding `address` becomes a row if it is not one, even
  // where CUDA's own view of the memory (a registration) would be found.
  void touch_host_block(uint64_t address, uint64_t ns);

  // Where memory in no allocation ends: the lowest start above `address` of
  // an allocation or host row live at `ns` (UINT64_MAX when none).
  uint64_t next_allocation_start(uint64_t address, uint64_t ns) const;

  // The NUMA node of host memory, remembered per allocation row.
  void remember_numa_node(uint64_t alloc_id, int numa_node);

 private:
  const AllocationRegistry& cuda_;
  HostBlockResolution host_;
  std::function<void(const PromotedBlock&)> write_block_;
  std::unordered_map<uint64_t, int> numa_nodes_;
};

}  // namespace apptracer
