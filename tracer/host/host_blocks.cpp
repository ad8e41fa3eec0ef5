#include "host/host_blocks.h"

#include <pthread.h>
#include <time.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <new>
#include <vector>

#include "base/clock.h"
#include "base/numa.h"
#include "buffer/allocation_registry.h"
#include "buffer/freed_history.h"
#include "buffer/node_pool.h"
#include "buffer/record_buffers.h"

namespace apptracer {
namespace host_blocks {

namespace {

constexpr int kSizeClasses = 65;  // class c holds sizes in [2^(c-1), 2^c); class 0 is size 0
constexpr int kRegionShift = 26;  // 64 MiB
constexpr int kRegionSlots = 16;
constexpr int kShardsPerRegion = 4;  // shard_of takes 2 bits of hash
constexpr int kShards = kRegionSlots * kShardsPerRegion;

int size_class(uint64_t bytes) { return bytes == 0 ? 0 : 64 - __builtin_clzll(bytes); }

struct Block {
  uint64_t bytes;
  uint64_t alloc_ns;
  uint64_t alloc_id;  // 0 until the block is an allocation row
  uint32_t tid;
  bool mapped;
};

using BlockMap = std::map<uint64_t, Block, std::less<uint64_t>,
                          PoolAllocator<std::pair<const uint64_t, Block>>>;

// A block freed before it was a row. The writer reads a copy's endpoints
// when it drains the copy's record, which for a short-lived buffer is often
// after the program freed it (at exit, everything is): the block is kept
// until the writer has passed its free, so a touch from its lifetime still
// makes it a row, with its real lifetime.
struct FreedBlock {
  uint64_t bytes;
  uint64_t alloc_ns;
  uint64_t free_ns;
  uint32_t tid;
  bool mapped;
  int numa_node;  // read at the free for large blocks, else -1
  // Made a row: left in the index until forgotten (the order of frees
  // points at it), never made one again.
  bool taken;
};

// Blocks at least this large live in a shard of their own: few programs
// hold many, and in the shared shards one of them made every lookup walk
// all freed blocks within its size below the address (a two-rank FSDP run's
// writer spent 85% of its time there and fell behind by seconds).
constexpr uint64_t kLargeBlockBytes = 1 << 20;

// A lookup that walks this many freed blocks without finding the address
// gives up: the touch then names no allocation (counted, in meta), rather
// than the writer falling behind the program.
constexpr int kMaxFreedWalk = 4096;

// A free of a block this large already costs an munmap or the touching of
// its pages; one move_pages call more is small beside it, and tells the
// writer where the pages were once they are gone.
constexpr uint64_t kNumaAtFreeMinBytes = 1 << 20;

// Live blocks never overlap, so the one holding an address is, in its
// shard, the nearest start at or below it. Shards keep two threads that
// allocate large blocks from serializing on one lock, and from sharing its
// cache lines (see shard_of).
struct alignas(64) Shard {
  std::mutex mutex;
  NodePool pool;
  BlockMap blocks{BlockMap::allocator_type(&pool)};
  // Freed blocks, in two parts. A free appends to `freed`, under `mutex`;
  // the writer moves them to `history` in one short hold of it, then
  // indexes, walks and forgets them under `history_mutex`, which no hook
  // takes. (Indexed under `mutex`, a lookup after thousands of frees kept
  // the program's next allocation waiting: up to 14 ms beside a writer
  // looking up every millisecond, bench/host_block_hooks.)
  FreedHistory<FreedBlock> freed;
  std::mutex history_mutex;
  FreedHistory<FreedBlock> history;
  // Blocks in `freed` and `history`, in all and by size class, and how many
  // more this shard may keep (taken from freed_room): the cap, and how far
  // below an address a lookup walks. Under `mutex`.
  uint32_t kept = 0;
  uint32_t kept_by_class[kSizeClasses] = {};
  uint32_t room = 0;
  // Freed blocks past the cap. Per shard, under its lock: a counter every
  // thread's frees bumped shared the cache line of `state`, which every
  // hook reads.
  uint64_t not_kept = 0;
  // The largest block it ever held (written under the lock, read without):
  // a lookup skips a shard whose blocks cannot reach the address.
  std::atomic<uint64_t> largest_bytes{0};
  void note_bytes(uint64_t bytes) {
    if (bytes > largest_bytes.load(std::memory_order_relaxed)) {
      largest_bytes.store(bytes, std::memory_order_relaxed);
    }
  }

  // What the writer forgot of `history` while not holding `mutex`, given
  // back to the counts under it.
  struct Forgotten {
    uint32_t blocks = 0;
    uint32_t by_class[kSizeClasses] = {};
    uint32_t not_kept = 0;
    void add(const FreedBlock& block) {
      ++blocks;
      ++by_class[size_class(block.bytes)];
    }
  };
  void forget(const Forgotten& forgotten) {
    kept -= forgotten.blocks;
    for (int c = 0; c < kSizeClasses; ++c) kept_by_class[c] -= forgotten.by_class[c];
    room += forgotten.blocks;
    not_kept += forgotten.not_kept;
  }
  // Writer side, with `mutex` held: the frees since the last hand-over go to
  // the history (one that finds no room there is forgotten at once).
  void hand_over_freed() {
    Forgotten dropped;
    history.take_recent(freed, [&dropped](const FreedBlock& block) {
      dropped.add(block);
      ++dropped.not_kept;
    });
    forget(dropped);
  }
  // The index of freed blocks. Writer side, with `history_mutex` held.
  FreedHistory<FreedBlock>::Index& indexed_history(Forgotten& dropped) {
    return history.indexed([&dropped](const FreedBlock& block) {
      dropped.add(block);
      ++dropped.not_kept;
    });
  }
  // An upper bound on the size of any block kept (0 when none is).
  uint64_t kept_reach() const {
    for (int c = kSizeClasses - 1; c >= 0; --c) {
      if (kept_by_class[c]) return c == 64 ? UINT64_MAX : uint64_t{1} << c;
    }
    return 0;
  }
  void forget_all() {
    freed.clear();
    history.clear();
    kept = 0;
    std::fill_n(kept_by_class, kSizeClasses, 0);
    room = 0;
  }
};

// Room for freed blocks that no shard holds. Written when a shard takes a
// batch and when the writer gives a shard's back, not per free; on a line of
// its own, as an empty pool is read by every free.
struct alignas(64) FreedRoom {
  std::atomic<uint32_t> left{kMaxFreedKept};
};
FreedRoom freed_room;

// Gives `shard` a batch of room, or whatever is left; false when none is.
bool take_room(Shard& shard) {
  uint32_t available = freed_room.left.load(std::memory_order_relaxed);
  while (available > 0) {
    uint32_t taken = std::min(available, kFreedRoomBatch);
    if (freed_room.left.compare_exchange_weak(available, available - taken,
                                              std::memory_order_relaxed)) {
      shard.room += taken;
      return true;
    }
  }
  return false;
}

void give_back_room(Shard& shard) {
  freed_room.left.fetch_add(shard.room, std::memory_order_relaxed);
  shard.room = 0;
}

// Per-thread counts: plain increments on the hot path, summed at the end.
// (One shared counter of rows, bumped by every thread's large blocks in all
// mode, made its cache line and the `state` pointer beside it bounce.)
struct ThreadCounts {
  uint64_t count[kSizeClasses];
  uint64_t bytes[kSizeClasses];
  uint64_t stored;  // blocks the thread's allocations made rows
  ThreadCounts* next;
  ThreadCounts* prev;
};

// Built at enable(), after the program may already have called malloc many
// times: nothing here may need a constructor to have run.
struct State {
  HostBlockOptions options;
  RecordBuffers* buffers = nullptr;
  Shard shards[kShards];
  Shard mapped;  // anonymous mmaps: another allocator's arenas may hold malloc blocks
  Shard large;   // malloc blocks of kLargeBlockBytes or more
  std::mutex counts_mutex;
  ThreadCounts* live_threads = nullptr;
  uint64_t exited_count[kSizeClasses] = {};
  uint64_t exited_bytes[kSizeClasses] = {};
  uint64_t exited_stored = 0;
  pthread_key_t thread_exit_key;
};

State* state = nullptr;
// Rows made where no thread's counts are: the writer's promotions, a thread
// whose counts could not be allocated.
std::atomic<uint64_t> stored_elsewhere{0};
// Lookups that passed may_contain, and those that gave up after
// kMaxFreedWalk freed blocks (writer side).
std::atomic<uint64_t> lookups_made{0};
std::atomic<uint64_t> walks_cut{0};
__thread ThreadCounts* thread_counts __attribute__((tls_model("initial-exec"))) = nullptr;

// Blocks are allocated and touched on different threads, and a touch is
// stamped when its call was entered: a block touched up to this long before
// its recorded allocation is still taken to be the one touched (its time
// becomes the touch's, see promote_locked).
constexpr uint64_t kClockSlackNs = 50'000;

// By 64 MiB region first, as the registry: glibc gives each thread's arena
// heaps of that size, so a thread's blocks fall in shards other threads
// seldom touch, and their locks, trees and pools stay in its core's cache.
// (Hashed over all shards, each thread pulled in lines the other had just
// written: the hooks cost 35% more per call with 2 threads than with 1.)
// Then by a hash of the address: a thread's blocks in one tree made 1
// thread's hooks 15% dearer (a deeper walk).
Shard& shard_of(uint64_t address) {
  uint64_t region = (address >> kRegionShift) % kRegionSlots;
  uint64_t hash = ((address >> 4) * 0x9e3779b97f4a7c15ull) >> 62;  // blocks are 16-byte aligned
  return state->shards[region * kShardsPerRegion + hash];
}

void fold_exited_thread(void* counts_pointer) {
  auto* counts = static_cast<ThreadCounts*>(counts_pointer);
  InsideTracer inside;
  {
    std::lock_guard<std::mutex> lock(state->counts_mutex);
    for (int c = 0; c < kSizeClasses; ++c) {
      state->exited_count[c] += counts->count[c];
      state->exited_bytes[c] += counts->bytes[c];
    }
    state->exited_stored += counts->stored;
    if (counts->prev) counts->prev->next = counts->next;
    if (counts->next) counts->next->prev = counts->prev;
    if (state->live_threads == counts) state->live_threads = counts->next;
  }
  thread_counts = nullptr;
  delete counts;
}

// A thread's first allocation: its counts made (nullptr if they could not
// be allocated). Out of line, so the counting path stays a few instructions.
[[gnu::noinline]] ThreadCounts* attach_counts() {
  auto* counts = new (std::nothrow) ThreadCounts{};
  if (!counts) return nullptr;
  {
    std::lock_guard<std::mutex> lock(state->counts_mutex);
    counts->next = state->live_threads;
    if (counts->next) counts->next->prev = counts;
    state->live_threads = counts;
  }
  pthread_setspecific(state->thread_exit_key, counts);
  thread_counts = counts;
  return counts;
}

// The calling thread's counts (nullptr if they could not be allocated).
inline ThreadCounts* count_allocation(uint64_t bytes) {
  ThreadCounts* counts = thread_counts;
  if (!counts && !(counts = attach_counts())) return nullptr;
  int c = size_class(bytes);
  ++counts->count[c];
  counts->bytes[c] += bytes;
  return counts;
}

void count_stored(ThreadCounts* counts) {
  if (counts) {
    ++counts->stored;
  } else {
    stored_elsewhere.fetch_add(1, std::memory_order_relaxed);
  }
}

// The allocation record of host block `id`.
Record allocation_record(uint64_t id, uint64_t address, uint64_t bytes, uint64_t ns, uint32_t tid,
                         bool mapped) {
  Record r{};
  r.type = RecordType::Allocation;
  AllocationRecord& a = r.allocation;
  a.alloc_id = id;
  a.address = address;
  a.bytes = bytes;
  a.ns = ns;
  a.flags = mapped ? 1 : 0;
  a.device = -1;
  a.alloc_tid = tid;
  a.kind = AllocKind::PageableHost;
  return r;
}

// Makes `block` (starting at `address`) an allocation row: registers it where
// addresses resolve and fills the record (the writer reads where its pages
// are). Called with its shard locked. `touched_ns`: when CUDA touched it (the
// block's time is clamped to it, see kClockSlackNs).
Record promote_locked(uint64_t address, Block& block, uint64_t touched_ns) {
  block.alloc_ns = std::min(block.alloc_ns, touched_ns);
  block.alloc_id =
      registry().add(address, block.bytes, AllocKind::PageableHost, -1, block.alloc_ns);
  return allocation_record(block.alloc_id, address, block.bytes, block.alloc_ns, block.tid,
                           block.mapped);
}

Record free_record(uint64_t alloc_id, uint64_t ns) {
  Record r{};
  r.type = RecordType::Free;
  r.free.alloc_id = alloc_id;
  r.free.ns = ns;
  return r;
}

// Ends the row a block is (if it is one) at `ns`; its id, or 0.
uint64_t end_row(uint64_t address, const Block& block, uint64_t ns) {
  if (!block.alloc_id) return 0;
  registry().remove(address, ns);
  return block.alloc_id;
}

// Keeps a block that was not a row for the writer (FreedBlock). Before the
// memory goes back: its pages are still there to ask about.
void keep_freed(Shard& shard, uint64_t address, const Block& block, uint64_t ns) {
  if (shard.room > 0 || take_room(shard)) {
    int node = block.bytes >= kNumaAtFreeMinBytes ? numa_node_of(address, block.bytes) : -1;
    FreedBlock freed{block.bytes, block.alloc_ns, ns, block.tid, block.mapped, node, false};
    if (shard.freed.add(address, freed)) {
      --shard.room;
      ++shard.kept;
      ++shard.kept_by_class[size_class(block.bytes)];
      return;
    }
  }
  ++shard.not_kept;
}

void end_block(Shard& shard, BlockMap::iterator it, uint64_t ns, uint64_t& freed_id) {
  freed_id = end_row(it->first, it->second, ns);
  if (!freed_id) keep_freed(shard, it->first, it->second, ns);
  shard.blocks.erase(it);
}

template <typename Visit>
void for_each_shard(Visit visit) {
  for (Shard& shard : state->shards) visit(shard);
  visit(state->large);
  visit(state->mapped);
}

// fork() must not copy a lock another thread holds into the child. The
// registry's too: in all mode the hooks change it under no shard of ours.
// (Hooks take a shard, then the registry: the same order here.)
void lock_all_before_fork() {
  if (!state) return;
  // A shard's history lock first: the writer never holds both.
  for_each_shard([](Shard& shard) {
    shard.history_mutex.lock();
    shard.mutex.lock();
  });
  registry().lock_all_shards();
  state->counts_mutex.lock();
}

void unlock_all_in_parent() {
  if (!state) return;
  state->counts_mutex.unlock();
  registry().unlock_all_shards();
  for_each_shard([](Shard& shard) {
    shard.mutex.unlock();
    shard.history_mutex.unlock();
  });
}

// The child keeps the parent's heap, so its blocks stay; but none is a row of
// the child's trace yet, and only this thread's counts are the child's.
void reset_in_child() {
  if (!state) return;
  unlock_all_in_parent();
  for_each_shard([](Shard& shard) {
    for (auto& entry : shard.blocks) entry.second.alloc_id = 0;
    shard.forget_all();
    shard.not_kept = 0;
  });
  freed_room.left = kMaxFreedKept;
  registry().reset_after_fork();
  stored_elsewhere = 0;
  state->live_threads = thread_counts;
  if (thread_counts) *thread_counts = ThreadCounts{};
  for (int c = 0; c < kSizeClasses; ++c) state->exited_count[c] = state->exited_bytes[c] = 0;
  state->exited_stored = 0;
}

}  // namespace

AllocationRegistry& registry() {
  // Host rows share the allocations table with CUDA's: one id sequence.
  // Split like the live map: every thread's malloc and free reach it.
  static AllocationRegistry* host_registry = new AllocationRegistry(&allocations(), kRegionSlots);
  return *host_registry;
}

void enable(const HostBlockOptions& options, RecordBuffers& buffers) {
  InsideTracer inside;
  if (!state) {
    state = new State;
    pthread_key_create(&state->thread_exit_key, fold_exited_thread);
    pthread_atfork(lock_all_before_fork, unlock_all_in_parent, reset_in_child);
  }
  state->options = options;
  min_bytes_value.store(options.min_bytes, std::memory_order_relaxed);
  state->buffers = &buffers;
  registry();
  enabled_flag.store(true, std::memory_order_release);
}

void disable() { enabled_flag.store(false, std::memory_order_release); }

// `all` mode, a malloc block: a row from its allocation, so the registry
// alone keeps it (the live map holds blocks waiting for CUDA's touch, and
// keeping both cost the program a second lock and map per call).
void store_row(uint64_t address, uint64_t bytes, ThreadCounts* counts) {
  uint64_t ns = now_ns();
  uint64_t missed_free_id = 0;
  uint64_t id = registry().add(address, bytes, AllocKind::PageableHost, -1, ns, &missed_free_id);
  count_stored(counts);
  // A row still here was freed by a path we do not see: it ends now.
  if (missed_free_id) {
    Record r = free_record(missed_free_id, ns);
    state->buffers->append(r);
  }
  address_regions.cover(address, bytes);
  // alloc_tid 0: allocated by the thread recording it.
  Record row = allocation_record(id, address, bytes, ns, 0, false);
  state->buffers->append(row);
}

// A block of the tracked size. Out of line: most calls are small blocks,
// and this path's frame (locks, a map node, records) made theirs dearer.
[[gnu::noinline]] void track_block(uint64_t address, uint64_t bytes, bool mapped, ThreadCounts* counts) {
  if (state->options.store_all && !mapped) return store_row(address, bytes, counts);
  Block block{bytes, now_ns(), 0, RecordBuffers::current_tid(), mapped};
  Shard& shard = mapped ? state->mapped : bytes >= kLargeBlockBytes ? state->large : shard_of(address);
  std::optional<Record> row;
  uint64_t missed_free_id = 0;
  {
    std::lock_guard<std::mutex> lock(shard.mutex);
    shard.note_bytes(bytes);
    auto [it, inserted] = shard.blocks.try_emplace(address, block);
    if (!inserted) {
      // A block still here was freed by a path we do not see: it ends now.
      missed_free_id = end_row(address, it->second, block.alloc_ns);
      if (!missed_free_id) keep_freed(shard, address, it->second, block.alloc_ns);
      it->second = block;
    }
    if (state->options.store_all) row = promote_locked(address, it->second, UINT64_MAX);
  }
  if (row) count_stored(counts);
  if (missed_free_id) {
    Record r = free_record(missed_free_id, block.alloc_ns);
    state->buffers->append(r);
  }
  address_regions.cover(address, bytes);
  if (row) {
    row->allocation.alloc_tid = 0;  // allocated by the thread recording it
    state->buffers->append(*row);
  }
}

void on_allocate(uint64_t address, uint64_t bytes, bool mapped) {
  ThreadCounts* counts = count_allocation(bytes);
  if (bytes >= state->options.min_bytes && address != 0) track_block(address, bytes, mapped, counts);
}

void on_free(uint64_t address) {
  if (state->options.store_all) {
    uint64_t ns = now_ns();
    if (std::optional<AllocationInfo> row = registry().remove_live(address, ns)) {
      Record r = free_record(row->id, ns);
      state->buffers->append(r);
    }
    return;
  }
  // The free does not say the size: a block not in its address's shard may
  // be a large one.
  uint64_t freed_id = 0;
  uint64_t ns = 0;
  auto end_in = [&](Shard& shard) {
    std::lock_guard<std::mutex> lock(shard.mutex);
    auto it = shard.blocks.find(address);
    if (it == shard.blocks.end()) return false;
    ns = now_ns();
    end_block(shard, it, ns, freed_id);
    return true;
  };
  if (!end_in(shard_of(address)) && !end_in(state->large)) return;
  if (freed_id) {
    Record r = free_record(freed_id, ns);
    state->buffers->append(r);
  }
}

bool on_unmap(uint64_t address, uint64_t bytes) {
  // Any mapped region the range overlaps ends (a partial unmap ends it too:
  // what is left is rarely what CUDA is handed afterwards).
  Shard& shard = state->mapped;
  std::vector<uint64_t> freed;
  bool ended = false;
  uint64_t ns = now_ns();
  {
    std::lock_guard<std::mutex> lock(shard.mutex);
    auto it = shard.blocks.upper_bound(address);
    if (it != shard.blocks.begin() && std::prev(it)->first + std::prev(it)->second.bytes > address) {
      --it;
    }
    while (it != shard.blocks.end() && it->first < address + bytes) {
      uint64_t id = 0;
      auto next = std::next(it);
      end_block(shard, it, ns, id);
      ended = true;
      if (id) freed.push_back(id);
      it = next;
    }
  }
  for (uint64_t id : freed) {
    Record r = free_record(id, ns);
    state->buffers->append(r);
  }
  return ended;
}

std::optional<PromotedBlock> promote_for_writer(uint64_t address, uint64_t ns) {
  // Not enabled(): the final pass runs after tracking stopped.
  if (!state || !may_contain(address)) return std::nullopt;
  lookups_made.fetch_add(1, std::memory_order_relaxed);
  auto allocated_by = [ns](uint64_t alloc_ns) {
    return alloc_ns <= ns || alloc_ns - ns <= kClockSlackNs;
  };
  // The block that held the address at `ns`: live and allocated by then, or
  // freed since (at most one did). One lock per shard for both. A live block
  // allocated just after `ns` (within the clock slack) only when no block
  // held it then: an address reused right after a free is the freed block's
  // until then (the live one came after that free), and stays so once it is
  // a row (taken).
  bool slack_seen = false;
  bool held_by_row = false;
  // The shard's live block holding the address. Not `slack`: in the same
  // hold, its frees since go to its history, and `reach` says how far below
  // the address a freed block may start.
  auto promote_live = [&](Shard& shard, bool slack, uint64_t& reach) -> std::optional<PromotedBlock> {
    std::lock_guard<std::mutex> lock(shard.mutex);
    auto live = shard.blocks.upper_bound(address);
    if (live != shard.blocks.begin()) {
      --live;
      Block& block = live->second;
      if (address - live->first < block.bytes && !block.alloc_id) {
        if (block.alloc_ns <= ns || (slack && allocated_by(block.alloc_ns))) {
          stored_elsewhere.fetch_add(1, std::memory_order_relaxed);
          return PromotedBlock{promote_locked(live->first, block, ns)};
        }
        slack_seen = slack_seen || allocated_by(block.alloc_ns);
      }
    }
    if (!slack) {
      shard.hand_over_freed();
      reach = shard.kept_reach();
    }
    return std::nullopt;
  };
  // Freed blocks may overlap (an address reused): walk down while one
  // starting there could still reach the address.
  auto walk_freed = [&](FreedHistory<FreedBlock>::Index& freed, uint64_t reach) -> std::optional<PromotedBlock> {
    int walked = 0;
    for (auto it = freed.upper_bound(address); it != freed.begin();) {
      --it;
      if (address - it->first >= reach) break;
      if (++walked > kMaxFreedWalk) {
        walks_cut.fetch_add(1, std::memory_order_relaxed);
        break;
      }
      FreedBlock& f = it->second;
      if (address - it->first >= f.bytes || !allocated_by(f.alloc_ns) || ns >= f.free_ns) continue;
      if (f.taken) {
        held_by_row = true;
        return std::nullopt;
      }
      uint64_t alloc_ns = std::min(f.alloc_ns, ns);
      PromotedBlock block;
      block.allocation = allocation_record(
          registry().add_ended(it->first, f.bytes, AllocKind::PageableHost, alloc_ns, f.free_ns),
          it->first, f.bytes, alloc_ns, f.tid, f.mapped);
      block.free_ns = f.free_ns;
      block.numa_node = f.numa_node;
      stored_elsewhere.fetch_add(1, std::memory_order_relaxed);
      f.taken = true;
      return block;
    }
    return std::nullopt;
  };
  // The history is indexed and walked under its own lock, which no hook
  // takes; what indexing drops for want of room is counted under the
  // shard's after.
  auto promote_freed = [&](Shard& shard, uint64_t reach) -> std::optional<PromotedBlock> {
    Shard::Forgotten dropped;
    std::optional<PromotedBlock> found;
    {
      std::lock_guard<std::mutex> lock(shard.history_mutex);
      found = walk_freed(shard.indexed_history(dropped), reach);
    }
    if (dropped.blocks) {
      std::lock_guard<std::mutex> lock(shard.mutex);
      shard.forget(dropped);
    }
    return found;
  };
  auto promote_in = [&](Shard& shard, bool slack) -> std::optional<PromotedBlock> {
    uint64_t reach = 0;
    if (std::optional<PromotedBlock> block = promote_live(shard, slack, reach)) return block;
    return slack ? std::nullopt : promote_freed(shard, reach);
  };
  // A block no larger than a region starts in the address's region or the
  // one below: only their shards, and shards that held larger blocks, can
  // hold it (a search of every shard was most of the writer's time).
  uint64_t region = (address >> kRegionShift) % kRegionSlots;
  uint64_t region_below = (region + kRegionSlots - 1) % kRegionSlots;
  auto may_hold = [&](int index) {
    uint64_t slot = static_cast<uint64_t>(index / kShardsPerRegion);
    return slot == region || slot == region_below ||
           state->shards[index].largest_bytes.load(std::memory_order_relaxed) >
               (uint64_t{1} << kRegionShift);
  };
  // Malloc blocks before mmapped regions (the more precise).
  auto promote_first = [&](bool slack) -> std::optional<PromotedBlock> {
    for (int index = 0; index < kShards; ++index) {
      if (!may_hold(index)) continue;
      if (std::optional<PromotedBlock> block = promote_in(state->shards[index], slack)) return block;
    }
    if (std::optional<PromotedBlock> block = promote_in(state->large, slack)) return block;
    return promote_in(state->mapped, slack);
  };
  if (std::optional<PromotedBlock> block = promote_first(false)) return block;
  return slack_seen && !held_by_row ? promote_first(true) : std::nullopt;
}

void forget_freed_before(uint64_t ns) {
  if (!state) return;
  // Rows freed before it resolve no touch still to be read either; without
  // this the registry's history grew by every row the program freed.
  registry().forget_freed_before(ns);
  for_each_shard([ns](Shard& shard) {
    // The history holds the older frees: forgotten first, under its own
    // lock; then the frees not handed over yet (oldest first, as few as
    // have passed: a hand-over here would move the rest under the lock).
    Shard::Forgotten forgotten;
    auto forget = [&forgotten](const FreedBlock& block) { forgotten.add(block); };
    {
      std::lock_guard<std::mutex> lock(shard.history_mutex);
      shard.history.forget_before(ns, forget);
    }
    std::lock_guard<std::mutex> lock(shard.mutex);
    shard.freed.forget_before(ns, forget);
    shard.forget(forgotten);
    // What the shard freed up, and what it took but did not use, is anyone's
    // again: a thread that stopped freeing holds no room another needs.
    give_back_room(shard);
  });
}

uint64_t not_kept_blocks() {
  if (!state) return 0;
  uint64_t not_kept = 0;
  for_each_shard([&not_kept](Shard& shard) {
    std::lock_guard<std::mutex> lock(shard.mutex);
    not_kept += shard.not_kept;
  });
  return not_kept;
}

uint64_t lookups() { return lookups_made.load(std::memory_order_relaxed); }
uint64_t lookups_cut() { return walks_cut.load(std::memory_order_relaxed); }

uint64_t stored_blocks() {
  if (!state) return 0;
  uint64_t stored = stored_elsewhere.load(std::memory_order_relaxed);
  std::lock_guard<std::mutex> lock(state->counts_mutex);
  stored += state->exited_stored;
  for (ThreadCounts* t = state->live_threads; t; t = t->next) stored += t->stored;
  return stored;
}

std::string histogram_json() {
  if (!state) return "[]";
  uint64_t count[kSizeClasses];
  uint64_t bytes[kSizeClasses];
  {
    std::lock_guard<std::mutex> lock(state->counts_mutex);
    for (int c = 0; c < kSizeClasses; ++c) {
      count[c] = state->exited_count[c];
      bytes[c] = state->exited_bytes[c];
    }
    // Live threads' counters are read while they may still count: each is
    // a word, so a read is at worst one allocation behind.
    for (ThreadCounts* t = state->live_threads; t; t = t->next) {
      for (int c = 0; c < kSizeClasses; ++c) {
        count[c] += t->count[c];
        bytes[c] += t->bytes[c];
      }
    }
  }
  std::string json = "[";
  for (int c = 0; c < kSizeClasses; ++c) {
    if (count[c] == 0) continue;
    uint64_t from = c == 0 ? 0 : 1ull << (c - 1);
    uint64_t to = c == 0 ? 0 : (c == 64 ? UINT64_MAX : (1ull << c) - 1);
    if (json.size() > 1) json += ",";
    json += "{\"min_bytes\":" + std::to_string(from) + ",\"max_bytes\":" + std::to_string(to) +
            ",\"count\":" + std::to_string(count[c]) + ",\"bytes\":" + std::to_string(bytes[c]) +
            "}";
  }
  return json + "]";
}

}  // namespace host_blocks
}  // namespace apptracer
