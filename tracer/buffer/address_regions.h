// The 64 MiB regions a kind of memory has ever been handed out in: a
// lock-free pre-filter for the launch hot path, which asks for every word of
// every kernel's parameters whether it may be a pointer, and for the writer,
// which looks such a word up.
//
// Not one span from the lowest address to the highest: CUDA's memory and the
// program's host blocks lie interleaved in the same part of the address
// space, so a span of host blocks held every device pointer, and each one the
// writer could not resolve in CUDA's allocations cost it a search of every
// host block (most of the writer's time in a PyTorch training run).
#pragma once

#include <atomic>
#include <cstdint>

namespace apptracer {

class AddressRegions {
 public:
  static constexpr int kRegionShift = 26;  // 64 MiB: glibc's arena heaps are this size
  static constexpr int kAddressBits = 47;  // user space under 4-level paging

  bool may_contain(uint64_t value) const {
    if (value >= kLimit) {
      return value >= above_lowest_.load(std::memory_order_relaxed) &&
             value < above_highest_.load(std::memory_order_relaxed);
    }
    uint64_t region = value >> kRegionShift;
    return bits_[region / 64].load(std::memory_order_relaxed) & (uint64_t{1} << (region % 64));
  }

  // Marks the regions [address, address + bytes) overlaps, from any thread.
  void cover(uint64_t address, uint64_t bytes) {
    if (bytes == 0) return;
    uint64_t end = address + bytes < address ? UINT64_MAX : address + bytes;
    if (end > kLimit) cover_above(address < kLimit ? kLimit : address, end);
    if (address >= kLimit) return;
    uint64_t last = ((end < kLimit ? end : kLimit) - 1) >> kRegionShift;
    for (uint64_t region = address >> kRegionShift; region <= last; ++region) {
      std::atomic<uint64_t>& word = bits_[region / 64];
      uint64_t bit = uint64_t{1} << (region % 64);
      if (!(word.load(std::memory_order_relaxed) & bit)) word.fetch_or(bit, std::memory_order_relaxed);
    }
  }

  void reset() {
    for (std::atomic<uint64_t>& word : bits_) word.store(0, std::memory_order_relaxed);
    above_lowest_ = UINT64_MAX;
    above_highest_ = 0;
  }

 private:
  static constexpr uint64_t kLimit = uint64_t{1} << kAddressBits;

  // Beyond 4-level paging's user space (5-level paging): a span is enough.
  void cover_above(uint64_t address, uint64_t end) {
    uint64_t low = above_lowest_.load(std::memory_order_relaxed);
    while (address < low && !above_lowest_.compare_exchange_weak(low, address)) {
    }
    uint64_t high = above_highest_.load(std::memory_order_relaxed);
    while (end > high && !above_highest_.compare_exchange_weak(high, end)) {
    }
  }

  std::atomic<uint64_t> bits_[(uint64_t{1} << (kAddressBits - kRegionShift)) / 64] = {};
  std::atomic<uint64_t> above_lowest_{UINT64_MAX};
  std::atomic<uint64_t> above_highest_{0};
};

}  // namespace apptracer
