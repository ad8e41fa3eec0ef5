#include "store/allocation_rows.h"

#include "base/numa.h"
#include "store/row_values.h"

namespace apptracer {

AllocationRows::AllocationRows(Database& db, AddressResolver& resolver)
    : db_(db),
      resolver_(resolver),
      allocations_(db),
      update_free_(db.prepare(
          "UPDATE allocations SET free_correlation_id = ?, free_ns = ? WHERE id = ?")) {}

void AllocationRows::write_promoted_block(const PromotedBlock& block) {
  if (!block.free_ns) {
    write_allocation(block.allocation);
    return;
  }
  // Freed before the writer saw the touch: its pages are gone, so where
  // they were comes from the free, and the free comes with the row.
  pending_frees_[block.allocation.allocation.alloc_id] = PendingFree{std::nullopt, block.free_ns};
  write_allocation(block.allocation, block.numa_node);
}

void AllocationRows::write_allocation(const Record& r, std::optional<int> numa_node_at_free) {
  const AllocationRecord& a = r.allocation;
  // Registering a block the program allocated makes that block a row too:
  // the registered row is CUDA's view of the same memory.
  if (a.kind == AllocKind::RegisteredHost) resolver_.touch_host_block(a.address, a.ns);
  AllocationRow row;
  row.id = as_int(a.alloc_id);
  row.kind = a.kind;
  row.address = as_int(a.address);
  row.bytes = as_int(a.bytes);
  row.device = optional_device(a.device);
  row.flags = a.flags;
  row.pitch = optional_nonzero(a.pitch);
  row.alloc_correlation_id = optional_nonzero(r.own_correlation_id);
  row.alloc_ns = as_int(a.ns);
  row.alloc_tid = static_cast<int64_t>(a.alloc_tid ? a.alloc_tid : r.tid);
  // Host memory: where its pages are, read here rather than on the
  // program's thread (a system call). Page-locked memory cannot move.
  MemoryKind memory = memory_kind_of(a.kind);
  if (memory == MemoryKind::Pageable || memory == MemoryKind::Pinned) {
    int node = a.numa_node_plus_one > 0 ? a.numa_node_plus_one - 1
               : numa_node_at_free    ? *numa_node_at_free
                                      : numa_node_of(a.address, a.bytes);
    if (node >= 0) row.numa_node = node;
    resolver_.remember_numa_node(a.alloc_id, node);
  }
  auto pending = pending_frees_.find(a.alloc_id);
  if (pending != pending_frees_.end()) {
    row.free_correlation_id = pending->second.correlation_id;
    row.free_ns = as_int(pending->second.ns);
    pending_frees_.erase(pending);
  }
  allocations_.insert(row);
}

void AllocationRows::write_free(const Record& r) {
  std::optional<int64_t> correlation = optional_nonzero(r.own_correlation_id);
  update_free_.bind(1, correlation)
      .bind(2, as_int(r.free.ns))
      .bind(3, as_int(r.free.alloc_id))
      .run();
  if (db_.changes() == 0) pending_frees_[r.free.alloc_id] = PendingFree{correlation, r.free.ns};
}

}  // namespace apptracer
