#include "store/allocation_rows.h"

#include "base/numa.h"
#include "store/row_values.h"

namespace apptracer {

AllocationRows::AllocationRows(Database& db, AddressResolver& resolver)
    : resolver_(resolver),
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
  pending_frees_[block.allocation.allocation.alloc_id] = Free{std::nullopt, block.free_ns};
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
  held_[a.alloc_id] = row;
}

void AllocationRows::write_free(const Record& r) {
  Free free{optional_nonzero(r.own_correlation_id), r.free.ns};
  uint64_t id = r.free.alloc_id;
  auto held = held_.find(id);
  if (held != held_.end()) {
    held->second.free_correlation_id = free.correlation_id;
    held->second.free_ns = as_int(free.ns);
  } else if (stored_open_.erase(id)) {
    frees_of_stored_.emplace_back(id, free);
  } else {
    pending_frees_[id] = free;
  }
}

void AllocationRows::end_pass() {
  for (const auto& [id, free] : frees_of_stored_) {
    update_free_.bind(1, free.correlation_id).bind(2, as_int(free.ns)).bind(3, as_int(id)).run();
  }
  frees_of_stored_.clear();
  for (const auto& [id, row] : held_) {
    allocations_.add(row);
    if (!row.free_ns) stored_open_.insert(id);
  }
  held_.clear();
  allocations_.flush();
}

}  // namespace apptracer
