// The span of addresses a kind of memory has ever been handed out in: a
// lock-free pre-filter for the launch hot path, which asks for every word of
// every kernel's parameters whether it may be a pointer.
#pragma once

#include <atomic>
#include <cstdint>

namespace apptracer {

class AddressRange {
 public:
  bool may_contain(uint64_t value) const {
    return value >= lowest_.load(std::memory_order_relaxed) &&
           value < highest_.load(std::memory_order_relaxed);
  }

  // Widens the span to cover [address, address + bytes), from any thread.
  void widen(uint64_t address, uint64_t bytes) {
    uint64_t low = lowest_.load(std::memory_order_relaxed);
    while (address < low && !lowest_.compare_exchange_weak(low, address)) {
    }
    uint64_t end = address + bytes;
    uint64_t high = highest_.load(std::memory_order_relaxed);
    while (end > high && !highest_.compare_exchange_weak(high, end)) {
    }
  }

  void reset() {
    lowest_ = UINT64_MAX;
    highest_ = 0;
  }

 private:
  std::atomic<uint64_t> lowest_{UINT64_MAX};
  std::atomic<uint64_t> highest_{0};
};

}  // namespace apptracer
