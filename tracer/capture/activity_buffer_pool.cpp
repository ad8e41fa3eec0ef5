#include "capture/activity_buffer_pool.h"

#include <sys/mman.h>

#include <cstring>

namespace apptracer {

namespace {

uint8_t* map_zeroed(bool populate) {
  int flags = MAP_PRIVATE | MAP_ANONYMOUS | (populate ? MAP_POPULATE : 0);
  void* memory = mmap(nullptr, ActivityBufferPool::kBufferBytes, PROT_READ | PROT_WRITE, flags, -1, 0);
  return memory == MAP_FAILED ? nullptr : static_cast<uint8_t*>(memory);
}

}  // namespace

void ActivityBufferPool::prefill(int count) {
  for (int i = 0; i < count && i < kSlots; ++i) {
    uint8_t* buffer = map_zeroed(true);
    if (!buffer || !keep(buffer)) {
      if (buffer) munmap(buffer, kBufferBytes);
      return;
    }
  }
}

uint8_t* ActivityBufferPool::take() {
  for (auto& slot : slots_) {
    if (slot.load(std::memory_order_relaxed) == nullptr) continue;
    if (uint8_t* buffer = slot.exchange(nullptr, std::memory_order_acquire)) return buffer;
  }
  return map_zeroed(false);
}

void ActivityBufferPool::give_back(uint8_t* buffer, size_t used) {
  if (!buffer) return;
  std::memset(buffer, 0, used < kBufferBytes ? used : kBufferBytes);
  if (!keep(buffer)) munmap(buffer, kBufferBytes);
}

bool ActivityBufferPool::keep(uint8_t* buffer) {
  for (auto& slot : slots_) {
    uint8_t* empty = nullptr;
    if (slot.compare_exchange_strong(empty, buffer, std::memory_order_release, std::memory_order_relaxed)) {
      return true;
    }
  }
  return false;
}

int ActivityBufferPool::kept() const {
  int count = 0;
  for (const auto& slot : slots_) count += slot.load(std::memory_order_relaxed) != nullptr;
  return count;
}

}  // namespace apptracer
