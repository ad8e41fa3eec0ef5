// Host memory the program allocates (malloc family, anonymous mmap), so a
// pointer CUDA is handed resolves to the block holding it, interior pointers
// too (host allocations are counted, not stored, unless CUDA touches them:
// docs/trace-contract.md).
//
// Blocks at or above a size threshold are kept in a live map. One becomes a
// row of `allocations` (kind pageable host, with its own allocation time and
// thread) when CUDA first touches it: a copy endpoint, a registration, a
// kernel argument. With `store_all` every such block is a row from the start.
// Every allocation, whatever its size, is counted in a per-thread size
// histogram that ends up in `meta`.
//
// The interposed allocator (host_allocator.cpp) calls in here with re-entry
// already excluded: nothing here runs while the same thread is inside the
// tracer (base/inside_tracer.h: our own allocations, a signal handler that
// interrupted us, the writer).
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>

#include "apptracer/records.h"
#include "base/inside_tracer.h"
#include "buffer/address_regions.h"
#include "buffer/promoted_block.h"

namespace apptracer {

class AllocationRegistry;
class RecordBuffers;

struct HostBlockOptions {
  uint64_t min_bytes = 4096;  // smaller blocks are only counted
  bool store_all = false;     // every block at or above min_bytes becomes a row
};

namespace host_blocks {

// Turns tracking on (lifecycle start) or off (finish). Off costs one load.
// Rows and frees go to `buffers`.
void enable(const HostBlockOptions& options, RecordBuffers& buffers);
void disable();
inline std::atomic<bool> enabled_flag{false};
inline bool enabled() { return enabled_flag.load(std::memory_order_relaxed); }
inline std::atomic<uint64_t> min_bytes_value{UINT64_MAX};
inline uint64_t min_bytes() { return min_bytes_value.load(std::memory_order_relaxed); }

// From the interposed allocator. `mapped`: anonymous mmap rather than malloc.
void on_allocate(uint64_t address, uint64_t bytes, bool mapped);
void on_free(uint64_t address);
// Ends the mapped regions the range overlaps; false when there were none.
bool on_unmap(uint64_t address, uint64_t bytes);

// Writer side: CUDA touched `address` in a call entered at `ns` (a copy
// endpoint, a registration, a kernel argument): the block that held it then,
// live or freed since, becomes an allocation row (registered where addresses
// resolve), returned for the caller to store. Nothing when no tracked block
// held it then, or it is a row already.
std::optional<PromotedBlock> promote_for_writer(uint64_t address, uint64_t ns);

// Writer side: no touch still to be read was entered before `ns`; blocks
// freed before it are no longer kept.
void forget_freed_before(uint64_t ns);

// Freed blocks kept at most, all shards together, while the writer lags:
// past it, the newest are not kept, counted here (and in
// meta.host_blocks_not_kept). One thread's blocks mostly share a shard, so
// the room is common to all, each shard taking it kFreedRoomBatch at a time.
inline constexpr uint32_t kMaxFreedKept = 1 << 18;
inline constexpr uint32_t kFreedRoomBatch = 1024;
uint64_t not_kept_blocks();

// The regions every tracked block has lain in: a cheap pre-filter for the
// launch hot path (it runs per parameter word) and the writer's lookups.
inline AddressRegions address_regions;
inline bool may_contain(uint64_t value) { return address_regions.may_contain(value); }

// Every allocation by power-of-two size class, as JSON for `meta`.
std::string histogram_json();

// The writer's lookups of an address in a region host blocks were seen in
// (meta host_block_lookups): each takes the locks of the shards it may lie
// in, which the program's allocation hooks take too.
uint64_t lookups();

// The writer's lookups that gave up walking freed blocks (meta
// host_block_lookups_cut): those touches name no allocation.
uint64_t lookups_cut();

// Blocks that became allocation rows (rows may still be waiting in buffers).
uint64_t stored_blocks();

// Where promoted blocks resolve (the writer looks here after CUDA's own).
AllocationRegistry& registry();

}  // namespace host_blocks

}  // namespace apptracer
