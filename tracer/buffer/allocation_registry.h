// Every allocation the program made, with its lifetime, so an address seen at
// time t resolves to the allocation that held it then (interior pointers too).
//
// Allocation and free callbacks update the registry synchronously, before the
// CUDA call returns to the program; the writer resolves records later, by
// time. So resolution is right even when the thread that frees or allocates
// is not the one whose records the writer happens to process first.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <vector>

#include "apptracer/enums.h"
#include "buffer/address_regions.h"
#include "buffer/freed_history.h"
#include "buffer/node_pool.h"

namespace apptracer {

struct AllocationInfo {
  uint64_t id = 0;
  uint64_t address = 0;
  uint64_t bytes = 0;
  uint64_t alloc_ns = 0;
  uint64_t free_ns = UINT64_MAX;  // UINT64_MAX while live
  int32_t device = -1;
  AllocKind kind = AllocKind::Device;
};

class AllocationRegistry {
 public:
  // Ids are allocation row ids: a registry whose rows share a table with
  // another's takes its ids from that one (`id_source`). `shards` > 1 splits
  // it by address (64 MiB regions, glibc's per-thread heap size), each under
  // its own lock: host blocks are added and removed by every thread's
  // malloc and free, and one lock for all of them serialized the threads.
  explicit AllocationRegistry(AllocationRegistry* id_source = nullptr, int shards = 1);

  // Registers memory that addresses resolve into. An older live allocation
  // overlapping the same start address is ended at `ns` (its free raced ours,
  // or was never seen); its id goes to `ended` (0 when there was none).
  uint64_t add(uint64_t address, uint64_t bytes, AllocKind kind, int32_t device, uint64_t ns,
               uint64_t* ended = nullptr);

  // Registers an allocation that already ended: a host block CUDA touched
  // while it lived, which the writer learns of after its free.
  uint64_t add_ended(uint64_t address, uint64_t bytes, AllocKind kind, uint64_t alloc_ns,
                     uint64_t free_ns);

  // Registers an allocation addresses never resolve into: VMM reservations
  // (their mappings are what pointers hit) and physical handles (no address).
  // `key` identifies it for remove_unresolvable.
  uint64_t add_unresolvable(AllocKind kind, uint64_t key, uint64_t ns);

  // Ends the live allocation starting at `address`; `ns` is when the free was
  // entered. Returns it (with free_ns set), or nothing if it is unknown.
  std::optional<AllocationInfo> remove(uint64_t address, uint64_t ns);
  // The same for a caller whose frees never race its allocations (host
  // blocks end before the real free): a live allocation only, so a free of
  // memory never registered looks at nothing else.
  std::optional<AllocationInfo> remove_live(uint64_t address, uint64_t ns);
  std::optional<uint64_t> remove_unresolvable(AllocKind kind, uint64_t key);

  // Cheap, lock-free pre-filter for the launch hot path: false when a value
  // lies outside every address range ever registered.
  const AddressRegions& regions() const { return regions_; }

  // The allocation containing `address` at time `ns`.
  std::optional<AllocationInfo> find(uint64_t address, uint64_t ns) const;
  // The lowest start above `address` of an allocation live at `ns`;
  // UINT64_MAX when there is none (where a range in no allocation ends).
  uint64_t next_start(uint64_t address, uint64_t ns) const;

  // Forgets allocations freed before `ns`: no record still to be resolved is
  // that old. Keeps a program that allocates and frees for hours from
  // growing the history without bound.
  void forget_freed_before(uint64_t ns);

  // In a forked child: start empty (the parent's GPU memory is not ours).
  void reset_after_fork();
  // Around fork(), for a registry the allocator hooks update: no shard is
  // copied into the child halfway through a change.
  void lock_all_shards();
  void unlock_all_shards();

 private:
  using LiveMap = std::map<uint64_t, AllocationInfo, std::less<uint64_t>,
                           PoolAllocator<std::pair<const uint64_t, AllocationInfo>>>;

  // Allocations whose start lies in this shard's regions.
  // Aligned: one thread's lock is not on a line beside another's tree.
  struct alignas(64) Shard {
    mutable std::mutex mutex;
    uint64_t largest_bytes = 0;
    NodePool live_nodes;
    LiveMap live{LiveMap::allocator_type(&live_nodes)};  // by start address
    // Lookups (const) index what was freed since the last one.
    mutable FreedHistory<AllocationInfo> freed;
    std::optional<AllocationInfo> find(uint64_t address, uint64_t ns) const;
    void end_live(LiveMap::iterator it, uint64_t ns);
    // Ends the one starting at `address` if it was allocated by `ns`.
    std::optional<AllocationInfo> end_live_at(uint64_t address, uint64_t ns);
    void note_bytes(uint64_t bytes) { largest_bytes = std::max(largest_bytes, bytes); }
  };

  uint64_t next_id() { return ++id_source_->last_id_; }
  size_t shard_index(uint64_t address) const;
  // After an allocation is added: its regions are marked, the largest size grows to it.
  void widen(uint64_t address, uint64_t bytes);

  AddressRegions regions_;
  AllocationRegistry* id_source_;
  std::atomic<uint64_t> last_id_{0};
  std::atomic<uint64_t> largest_bytes_{0};  // of every shard: how far back a block can reach
  std::vector<Shard> shards_;
  std::map<std::pair<int, uint64_t>, uint64_t> unresolvable_;  // (kind, key) -> id; shards_[0]'s lock
};

AllocationRegistry& allocations();

}  // namespace apptracer
