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

}  // namespace

uint64_t AllocationRegistry::add(uint64_t address, uint64_t bytes, AllocKind kind, int32_t device,
                                 uint64_t ns) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto old = live_.find(address);
  if (old != live_.end()) {
    old->second.free_ns = ns;
    freed_in_order_.push_back(freed_.emplace(address, old->second));
    live_.erase(old);
  }
  AllocationInfo info = described(next_id(), address, bytes, kind, device, ns);
  live_[address] = info;
  if (bytes > largest_bytes_) largest_bytes_ = bytes;
  range_.widen(address, bytes);
  return info.id;
}

uint64_t AllocationRegistry::add_ended(uint64_t address, uint64_t bytes, AllocKind kind,
                                       uint64_t alloc_ns, uint64_t free_ns) {
  std::lock_guard<std::mutex> lock(mutex_);
  AllocationInfo info = described(next_id(), address, bytes, kind, -1, alloc_ns);
  info.free_ns = free_ns;
  // Out of free order in freed_in_order_: it is forgotten a pass or so late.
  freed_in_order_.push_back(freed_.emplace(address, info));
  if (bytes > largest_bytes_) largest_bytes_ = bytes;
  range_.widen(address, bytes);
  return info.id;
}

uint64_t AllocationRegistry::add_unresolvable(AllocKind kind, uint64_t key, uint64_t) {
  std::lock_guard<std::mutex> lock(mutex_);
  uint64_t id = next_id();
  unresolvable_[{static_cast<int>(kind), key}] = id;
  return id;
}

std::optional<AllocationInfo> AllocationRegistry::remove(uint64_t address, uint64_t ns) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = live_.find(address);
  if (it != live_.end() && it->second.alloc_ns <= ns) {
    AllocationInfo info = it->second;
    info.free_ns = ns;
    freed_in_order_.push_back(freed_.emplace(address, info));
    live_.erase(it);
    return info;
  }
  // Already ended by an allocation that reused the address before this free's
  // callback ran: report the one that was live when the free was entered.
  auto range = freed_.equal_range(address);
  for (auto f = range.first; f != range.second; ++f) {
    if (f->second.alloc_ns <= ns && ns <= f->second.free_ns) return f->second;
  }
  return std::nullopt;
}

std::optional<uint64_t> AllocationRegistry::remove_unresolvable(AllocKind kind, uint64_t key) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = unresolvable_.find({static_cast<int>(kind), key});
  if (it == unresolvable_.end()) return std::nullopt;
  uint64_t id = it->second;
  unresolvable_.erase(it);
  return id;
}

std::optional<AllocationInfo> AllocationRegistry::find(uint64_t address, uint64_t ns) const {
  std::lock_guard<std::mutex> lock(mutex_);
  // Live allocations never overlap: the nearest start at or below wins.
  auto live = live_.upper_bound(address);
  if (live != live_.begin() && contains(std::prev(live)->second, address, ns)) {
    return std::prev(live)->second;
  }
  // Older lifetimes: walk down from the address while an allocation starting
  // there could still reach it.
  auto freed = freed_.upper_bound(address);
  while (freed != freed_.begin()) {
    --freed;
    if (address - freed->first >= largest_bytes_ && freed->first != address) break;
    if (contains(freed->second, address, ns)) return freed->second;
  }
  // The live one may have been allocated after `ns`; so may everything else.
  return std::nullopt;
}

uint64_t AllocationRegistry::next_start(uint64_t address, uint64_t ns) const {
  std::lock_guard<std::mutex> lock(mutex_);
  uint64_t next = UINT64_MAX;
  for (auto live = live_.upper_bound(address); live != live_.end(); ++live) {
    if (live->second.alloc_ns <= ns) {
      next = live->first;
      break;
    }
  }
  for (auto freed = freed_.upper_bound(address); freed != freed_.end() && freed->first < next;
       ++freed) {
    if (freed->second.alloc_ns <= ns && ns < freed->second.free_ns) next = freed->first;
  }
  return next;
}

void AllocationRegistry::forget_freed_before(uint64_t ns) {
  std::lock_guard<std::mutex> lock(mutex_);
  // Frees arrive in roughly time order; stopping at the first younger one
  // keeps this cheap and only delays forgetting a few.
  while (!freed_in_order_.empty() && freed_in_order_.front()->second.free_ns < ns) {
    freed_.erase(freed_in_order_.front());
    freed_in_order_.pop_front();
  }
}

void AllocationRegistry::reset_after_fork() {
  // The mutex may have been held by a thread the child does not have.
  new (&mutex_) std::mutex;
  live_.clear();
  freed_in_order_.clear();
  freed_.clear();
  unresolvable_.clear();
  largest_bytes_ = 0;
  range_.reset();
}

AllocationRegistry& allocations() {
  static AllocationRegistry* registry = new AllocationRegistry;
  return *registry;
}

}  // namespace apptracer
