#include "buffer/allocation_registry.h"

#include <iterator>
#include <new>

namespace apptracer {

namespace {

bool contains(const AllocationInfo& a, uint64_t address, uint64_t ns) {
  return address >= a.address && address - a.address < (a.bytes ? a.bytes : 1) &&
         a.alloc_ns <= ns && ns < a.free_ns;
}

AllocationInfo described(uint64_t id, uint64_t address, uint64_t bytes, AllocKind kind,
                         int32_t device, uint64_t alloc_ns) {
  AllocationInfo info;
  info.id = id;
  info.address = address;
  info.bytes = bytes;
  info.alloc_ns = alloc_ns;
  info.device = device;
  info.kind = kind;
  return info;
}

constexpr int kRegionShift = 26;  // 64 MiB

}  // namespace

AllocationRegistry::AllocationRegistry(AllocationRegistry* id_source, int shards)
    : id_source_(id_source ? id_source : this), shards_(shards > 0 ? shards : 1) {}

size_t AllocationRegistry::shard_index(uint64_t address) const {
  return shards_.size() == 1 ? 0 : (address >> kRegionShift) % shards_.size();
}

void AllocationRegistry::widen(uint64_t address, uint64_t bytes) {
  uint64_t largest = largest_bytes_.load(std::memory_order_relaxed);
  while (bytes > largest && !largest_bytes_.compare_exchange_weak(largest, bytes)) {
  }
  regions_.cover(address, bytes);
}

void AllocationRegistry::Shard::end_live(LiveMap::iterator it, uint64_t ns) {
  it->second.free_ns = ns;
  // Without memory to keep it, a lookup from before its end cannot find it:
  // a lesser harm than failing the free.
  freed.add(it->first, it->second);
  live.erase(it);
}

uint64_t AllocationRegistry::add(uint64_t address, uint64_t bytes, AllocKind kind, int32_t device,
                                 uint64_t ns, uint64_t* ended) {
  Shard& shard = shards_[shard_index(address)];
  AllocationInfo info = described(next_id(), address, bytes, kind, device, ns);
  if (ended) *ended = 0;
  {
    std::lock_guard<std::mutex> lock(shard.mutex);
    auto old = shard.live.find(address);
    if (old != shard.live.end()) {
      if (ended) *ended = old->second.id;
      shard.end_live(old, ns);
    }
    shard.live[address] = info;
    shard.note_bytes(bytes);
  }
  widen(address, bytes);
  return info.id;
}

uint64_t AllocationRegistry::add_ended(uint64_t address, uint64_t bytes, AllocKind kind,
                                       uint64_t alloc_ns, uint64_t free_ns) {
  Shard& shard = shards_[shard_index(address)];
  AllocationInfo info = described(next_id(), address, bytes, kind, -1, alloc_ns);
  info.free_ns = free_ns;
  {
    std::lock_guard<std::mutex> lock(shard.mutex);
    // Out of free order: it is forgotten a pass or so late.
    shard.freed.add(address, info);
    shard.note_bytes(bytes);
  }
  widen(address, bytes);
  return info.id;
}

uint64_t AllocationRegistry::add_unresolvable(AllocKind kind, uint64_t key, uint64_t) {
  std::lock_guard<std::mutex> lock(shards_[0].mutex);
  uint64_t id = next_id();
  unresolvable_[{static_cast<int>(kind), key}] = id;
  return id;
}

std::optional<AllocationInfo> AllocationRegistry::Shard::end_live_at(uint64_t address, uint64_t ns) {
  auto it = live.find(address);
  if (it == live.end() || it->second.alloc_ns > ns) return std::nullopt;
  AllocationInfo info = it->second;
  end_live(it, ns);
  info.free_ns = ns;
  return info;
}

std::optional<AllocationInfo> AllocationRegistry::remove_live(uint64_t address, uint64_t ns) {
  Shard& shard = shards_[shard_index(address)];
  std::lock_guard<std::mutex> lock(shard.mutex);
  return shard.end_live_at(address, ns);
}

std::optional<AllocationInfo> AllocationRegistry::remove(uint64_t address, uint64_t ns) {
  Shard& shard = shards_[shard_index(address)];
  std::lock_guard<std::mutex> lock(shard.mutex);
  if (std::optional<AllocationInfo> ended = shard.end_live_at(address, ns)) return ended;
  // Already ended by an allocation that reused the address before this free's
  // callback ran: report the one that was live when the free was entered.
  auto range = shard.freed.indexed().equal_range(address);
  for (auto f = range.first; f != range.second; ++f) {
    if (f->second.alloc_ns <= ns && ns <= f->second.free_ns) return f->second;
  }
  return std::nullopt;
}

std::optional<uint64_t> AllocationRegistry::remove_unresolvable(AllocKind kind, uint64_t key) {
  std::lock_guard<std::mutex> lock(shards_[0].mutex);
  auto it = unresolvable_.find({static_cast<int>(kind), key});
  if (it == unresolvable_.end()) return std::nullopt;
  uint64_t id = it->second;
  unresolvable_.erase(it);
  return id;
}

std::optional<AllocationInfo> AllocationRegistry::Shard::find(uint64_t address, uint64_t ns) const {
  std::lock_guard<std::mutex> lock(mutex);
  // Live allocations never overlap: the nearest start at or below wins.
  auto at = live.upper_bound(address);
  if (at != live.begin() && contains(std::prev(at)->second, address, ns)) return std::prev(at)->second;
  // Older lifetimes: walk down from the address while an allocation starting
  // there could still reach it.
  const FreedHistory<AllocationInfo>::Index& ended = freed.indexed();
  auto old = ended.upper_bound(address);
  while (old != ended.begin()) {
    --old;
    if (address - old->first >= largest_bytes && old->first != address) break;
    if (contains(old->second, address, ns)) return old->second;
  }
  // The live one may have been allocated after `ns`; so may everything else.
  return std::nullopt;
}

std::optional<AllocationInfo> AllocationRegistry::find(uint64_t address, uint64_t ns) const {
  // The allocation holding `address` starts in its region or in one at most
  // the largest allocation's size below: those regions' shards, nearest first.
  uint64_t reach = std::min(address, largest_bytes_.load(std::memory_order_relaxed));
  uint64_t lowest_region = (address - reach) >> kRegionShift;
  size_t asked = 0;
  for (uint64_t region = address >> kRegionShift; asked < shards_.size(); --region, ++asked) {
    if (auto found = shards_[shard_index(region << kRegionShift)].find(address, ns)) return found;
    if (region == lowest_region) break;
  }
  return std::nullopt;
}

uint64_t AllocationRegistry::next_start(uint64_t address, uint64_t ns) const {
  uint64_t next = UINT64_MAX;
  for (const Shard& shard : shards_) {
    std::lock_guard<std::mutex> lock(shard.mutex);
    for (auto live = shard.live.upper_bound(address); live != shard.live.end() && live->first < next;
         ++live) {
      if (live->second.alloc_ns <= ns) {
        next = live->first;
        break;
      }
    }
    const FreedHistory<AllocationInfo>::Index& ended = shard.freed.indexed();
    for (auto freed = ended.upper_bound(address); freed != ended.end() && freed->first < next;
         ++freed) {
      if (freed->second.alloc_ns <= ns && ns < freed->second.free_ns) next = freed->first;
    }
  }
  return next;
}

void AllocationRegistry::forget_freed_before(uint64_t ns) {
  for (Shard& shard : shards_) {
    std::lock_guard<std::mutex> lock(shard.mutex);
    shard.freed.forget_before(ns, [](const AllocationInfo&) {});
  }
}

void AllocationRegistry::reset_after_fork() {
  for (Shard& shard : shards_) {
    // The mutex may have been held by a thread the child does not have.
    new (&shard.mutex) std::mutex;
    shard.live.clear();
    shard.freed.clear();
    shard.largest_bytes = 0;
  }
  unresolvable_.clear();
  largest_bytes_ = 0;
  regions_.reset();
}

void AllocationRegistry::lock_all_shards() {
  for (Shard& shard : shards_) shard.mutex.lock();
}

void AllocationRegistry::unlock_all_shards() {
  for (Shard& shard : shards_) shard.mutex.unlock();
}

AllocationRegistry& allocations() {
  static AllocationRegistry* registry = new AllocationRegistry;
  return *registry;
}

}  // namespace apptracer
