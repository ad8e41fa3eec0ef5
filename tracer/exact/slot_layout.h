// The per-launch aggregation buffer ("slot") that the device patch
// (exact_patch.cu) fills and the host (slot_decoder, slot_pool) reads back.
// Compiled by nvcc and by the host compiler alike: plain types only.
//
// A slot is one device allocation: a header, a dense array of page entries
// and an open-addressing index from 4 KiB page to entry. An entry holds two
// 128-bit masks of the page's 32-byte granules: read (before this launch
// wrote them) and written. Nothing leaves the GPU per access; the host reads
// back the header and the entries in use once the launch is done.
//
// Index words are epoch | page | entry. The host gives each use of a slot a
// new epoch, so words of earlier uses read as free and the index never has
// to be cleared between launches (only when the epoch wraps).
#pragma once

#include <stdint.h>

// The offsets below are computed on both sides.
#ifdef __CUDACC__
#define APPTRACER_HOST_DEVICE __host__ __device__
#else
#define APPTRACER_HOST_DEVICE
#endif

namespace apptracer::exact {

constexpr uint32_t kPageShift = 12;  // 4 KiB pages
constexpr uint64_t kPageBytes = uint64_t{1} << kPageShift;
constexpr uint32_t kGranuleShift = 5;  // 32-byte granules: the DRAM sector
constexpr uint64_t kGranuleBytes = uint64_t{1} << kGranuleShift;
constexpr uint32_t kGranulesPerPage = static_cast<uint32_t>(kPageBytes / kGranuleBytes);  // 128
constexpr uint32_t kMaskWords = kGranulesPerPage / 32;

constexpr uint32_t kEntryBits = 20;
constexpr uint32_t kPageBits = 37;  // 49-bit virtual addresses
constexpr uint32_t kEpochShift = kEntryBits + kPageBits;
constexpr uint64_t kEntryMask = (uint64_t{1} << kEntryBits) - 1;
constexpr uint32_t kMaxEpoch = 127;  // 7 bits; epochs run 1..kMaxEpoch
constexpr uint32_t kMaxCapacity = (1u << kEntryBits) - 1;
constexpr uint32_t kMaxProbes = 64;
// An entry whose insertion lost a race to another lane's (never used).
constexpr uint64_t kAbandonedPage = ~uint64_t{0};

// Access kinds as the patch passes them around (bit 0 read, bit 1 write).
constexpr uint32_t kRead = 1;
constexpr uint32_t kWrite = 2;

struct SlotHeader {
  uint32_t count;        // entries claimed; past capacity when the table overflowed
  uint32_t overflow;     // nonzero: some accesses only widened the bounds below
  uint32_t epoch;        // this use's epoch, 1..kMaxEpoch
  uint32_t capacity;     // entries
  uint32_t index_words;  // a power of two, at least twice the capacity
  uint32_t reserved;
  // Bounds [lo, hi) of the accesses that did not fit; lo > hi when none.
  // Atomics widen both.
  uint64_t read_lo, read_hi;
  uint64_t write_lo, write_hi;
  uint64_t padding;
};
static_assert(sizeof(SlotHeader) == 64, "one header, one 64-byte line");

struct PageEntry {
  uint64_t page;                // address >> kPageShift, or kAbandonedPage
  uint32_t read[kMaskWords];    // granules read before the launch wrote them
  uint32_t write[kMaskWords];   // granules written
};
static_assert(sizeof(PageEntry) == 40, "entries are read back densely");

// Byte offsets inside a slot.
APPTRACER_HOST_DEVICE constexpr uint64_t entries_offset() { return sizeof(SlotHeader); }
APPTRACER_HOST_DEVICE constexpr uint64_t index_offset(uint32_t capacity) {
  return entries_offset() + uint64_t{capacity} * sizeof(PageEntry);
}
APPTRACER_HOST_DEVICE constexpr uint64_t slot_bytes(uint32_t capacity, uint32_t index_words) {
  return index_offset(capacity) + uint64_t{index_words} * sizeof(uint64_t);
}

// A header ready for a launch: empty table, no bounds.
inline SlotHeader fresh_header(uint32_t epoch, uint32_t capacity, uint32_t index_words) {
  SlotHeader h{};
  h.epoch = epoch;
  h.capacity = capacity;
  h.index_words = index_words;
  h.read_lo = h.write_lo = ~uint64_t{0};
  return h;
}

}  // namespace apptracer::exact
