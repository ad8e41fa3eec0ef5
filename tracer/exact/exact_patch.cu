// The device side of --exact: callbacks the Compute Sanitizer inserts before
// every global-memory instruction (and asynchronous and bulk copy) of every
// patched kernel. Built with `nvcc --compile-as-tools-patch` and embedded in
// libapptracer.so (CMakeLists.txt); loaded per context by sanitizerAddPatches.
//
// Each callback records into the launch's slot (slot_layout.h), passed as
// userdata (NULL: the launch is not recorded). Cost is what matters here:
// lanes of a warp that touch the same page with the same kind of access are
// merged first (__match_any_sync, __shfl_sync), one lane per group
// updates the table, and a mask bit already set costs a load, no atomic.
#include <sanitizer_patching.h>

#include "exact/slot_layout.h"

using namespace apptracer::exact;

namespace {

constexpr uint32_t kNoEntry = 0xffffffffu;

__device__ __forceinline__ uint32_t lane_id() {
  uint32_t lane;
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
  return lane;
}

__device__ __forceinline__ PageEntry* entries_of(SlotHeader* slot) {
  return reinterpret_cast<PageEntry*>(reinterpret_cast<char*>(slot) + entries_offset());
}

__device__ __forceinline__ unsigned long long* index_of(SlotHeader* slot, uint32_t capacity) {
  return reinterpret_cast<unsigned long long*>(reinterpret_cast<char*>(slot) +
                                               index_offset(capacity));
}

__device__ __forceinline__ uint32_t hash_page(uint64_t page) {
  return static_cast<uint32_t>((page * 0x9E3779B97F4A7C15ull) >> 32);
}

// The entry of `page` in this launch's table, added if new; kNoEntry when
// the table is full. Lock-free: an entry is filled before its index word is
// published with one CAS; a lane that loses the race abandons its entry and
// uses the winner's. Loads bypass L1 (__ldcg): a line cached earlier in the
// launch may hold an entry's previous use.
__device__ uint32_t find_or_add(SlotHeader* slot, uint64_t page) {
  if (page >> kPageBits) return kNoEntry;
  uint32_t epoch = slot->epoch;
  uint32_t capacity = slot->capacity;
  uint32_t mask = slot->index_words - 1;
  unsigned long long* index = index_of(slot, capacity);
  PageEntry* entries = entries_of(slot);
  unsigned long long tag = (static_cast<unsigned long long>(epoch) << kEpochShift) |
                           (static_cast<unsigned long long>(page) << kEntryBits);
  uint32_t position = hash_page(page) & mask;
  for (uint32_t probe = 0; probe < kMaxProbes; ++probe, position = (position + 1) & mask) {
    unsigned long long word = __ldcg(&index[position]);
    while (true) {
      if ((word & ~kEntryMask) == tag) return static_cast<uint32_t>(word & kEntryMask);
      if ((word >> kEpochShift) == epoch) break;  // another page's
      uint32_t entry = atomicAdd(&slot->count, 1u);
      if (entry >= capacity) return kNoEntry;
      PageEntry* e = &entries[entry];
      e->page = page;
      for (uint32_t i = 0; i < kMaskWords; ++i) e->read[i] = e->write[i] = 0;
      __threadfence();
      unsigned long long seen = atomicCAS(&index[position], word, tag | entry);
      if (seen == word) return entry;
      e->page = kAbandonedPage;
      word = seen;
    }
  }
  return kNoEntry;
}

// Accesses the table has no room for widen the bounds instead: still a
// superset, and the host marks the launch approximate.
__device__ void widen(SlotHeader* slot, uint32_t kind, uint64_t lo, uint64_t hi) {
  atomicExch(&slot->overflow, 1u);
  if (kind & kRead) {
    atomicMin(reinterpret_cast<unsigned long long*>(&slot->read_lo), lo);
    atomicMax(reinterpret_cast<unsigned long long*>(&slot->read_hi), hi);
  }
  if (kind & kWrite) {
    atomicMin(reinterpret_cast<unsigned long long*>(&slot->write_lo), lo);
    atomicMax(reinterpret_cast<unsigned long long*>(&slot->write_hi), hi);
  }
}

__device__ __forceinline__ void set_if_clear(uint32_t* word, uint32_t bits) {
  if (bits && (__ldcg(word) & bits) != bits) atomicOr(word, bits);
}

// Granules `bits` of `page` were accessed as `kind`. A plain read of a
// granule this launch already wrote reads the launch's own output, not what
// was there before: it is not recorded as a read. Atomics read what was there.
// (The mask words come as four values: an array argument would go through
// local memory.)
__device__ __noinline__ void record(SlotHeader* slot, uint64_t page, uint32_t kind, uint32_t b0,
                                   uint32_t b1, uint32_t b2, uint32_t b3) {
  const uint32_t bits[kMaskWords] = {b0, b1, b2, b3};
  uint32_t entry = find_or_add(slot, page);
  if (entry == kNoEntry) {
    uint32_t first = 0, last = 0;
    bool any = false;
    for (uint32_t i = 0; i < kMaskWords; ++i) {
      if (!bits[i]) continue;
      if (!any) first = i * 32 + __ffs(bits[i]) - 1;
      last = i * 32 + 31 - __clz(bits[i]);
      any = true;
    }
    uint64_t base = page << kPageShift;
    widen(slot, kind, base + first * kGranuleBytes, base + (last + 1) * kGranuleBytes);
    return;
  }
  PageEntry* e = &entries_of(slot)[entry];
  for (uint32_t i = 0; i < kMaskWords; ++i) {
    if (!bits[i]) continue;
    if (kind & kWrite) set_if_clear(&e->write[i], bits[i]);
    if (kind == kRead) {
      set_if_clear(&e->read[i], bits[i] & ~__ldcg(&e->write[i]));
    } else if (kind & kRead) {
      set_if_clear(&e->read[i], bits[i]);
    }
  }
}

// One access of at most 16 bytes per lane (naturally aligned, so within one
// granule). Lanes touching the same page with the same kind are merged: the
// first lane of each such group gathers the group's granules (one shuffle
// per distinct granule; tools patches may not use redux) and records them.
__device__ __forceinline__ void note_lane_access(SlotHeader* slot, uint64_t address,
                                                 uint32_t kind) {
  uint32_t active = __activemask();
  uint32_t taking_part = __ballot_sync(active, kind != 0);
  if (kind == 0) return;
  uint64_t page = address >> kPageShift;
  uint32_t granule = static_cast<uint32_t>(address & (kPageBytes - 1)) >> kGranuleShift;
  uint32_t lane = lane_id();
  uint32_t page_group = __match_any_sync(taking_part, (page << 2) | kind);
  uint32_t same_granule = __match_any_sync(page_group, granule);
  uint32_t granule_leaders =
      __ballot_sync(page_group, lane == static_cast<uint32_t>(__ffs(same_granule) - 1));
  uint32_t bits[kMaskWords] = {0, 0, 0, 0};
  for (uint32_t rest = granule_leaders; rest; rest &= rest - 1) {
    uint32_t g = __shfl_sync(page_group, granule, __ffs(rest) - 1);
    for (uint32_t i = 0; i < kMaskWords; ++i) bits[i] |= g / 32 == i ? 1u << (g % 32) : 0u;
  }
  if (lane == static_cast<uint32_t>(__ffs(page_group) - 1)) {
    record(slot, page, kind, bits[0], bits[1], bits[2], bits[3]);
  }
}

// [address, address + bytes) accessed as `kind`, by one lane (bulk copies:
// every active lane passes the same operands, the first one records).
__device__ void note_range(SlotHeader* slot, uint64_t address, uint64_t bytes, uint32_t kind) {
  if (lane_id() != static_cast<uint32_t>(__ffs(__activemask()) - 1)) return;
  uint64_t end = address + bytes;
  while (address < end) {
    uint64_t page = address >> kPageShift;
    uint64_t stop = min(end, (page + 1) << kPageShift);
    uint32_t first = static_cast<uint32_t>(address & (kPageBytes - 1)) >> kGranuleShift;
    uint32_t last = static_cast<uint32_t>((stop - 1) & (kPageBytes - 1)) >> kGranuleShift;
    uint32_t bits[kMaskWords];
    for (uint32_t i = 0; i < kMaskWords; ++i) {
      uint32_t lo = max(first, i * 32), hi = min(last, i * 32 + 31);
      bits[i] = lo > hi ? 0u : (0xffffffffu >> (31 - (hi - lo))) << (lo - i * 32);
    }
    record(slot, page, kind, bits[0], bits[1], bits[2], bits[3]);
    address = stop;
  }
}

}  // namespace

extern "C" __device__ __noinline__ SanitizerPatchResult apptracer_exact_access(
    void* userdata, uint64_t, void* ptr, uint32_t, uint32_t flags, const void*) {
  if (!userdata) return SANITIZER_PATCH_SUCCESS;
  // A cache prefetch moves no data the program sees. Atomics are expected to
  // come as read and write (test_apps exact_patterns, histogram, checks it).
  bool prefetch = flags & SANITIZER_MEMORY_DEVICE_FLAG_PREFETCH;
  uint32_t kind = prefetch ? 0
                           : (flags & SANITIZER_MEMORY_DEVICE_FLAG_READ ? kRead : 0) |
                                 (flags & SANITIZER_MEMORY_DEVICE_FLAG_WRITE ? kWrite : 0);
  note_lane_access(static_cast<SlotHeader*>(userdata), reinterpret_cast<uint64_t>(ptr), kind);
  return SANITIZER_PATCH_SUCCESS;
}

// cp.async: a read of global memory into shared memory (src NULL: zero fill).
extern "C" __device__ __noinline__ SanitizerPatchResult apptracer_exact_memcpy_async(
    void* userdata, uint64_t, void* src, uint32_t, uint32_t) {
  if (!userdata) return SANITIZER_PATCH_SUCCESS;
  note_lane_access(static_cast<SlotHeader*>(userdata), reinterpret_cast<uint64_t>(src),
                   src ? kRead : 0);
  return SANITIZER_PATCH_SUCCESS;
}

// cp.async.bulk global -> shared: bits 0:15 of `data` count 16-byte blocks.
extern "C" __device__ __noinline__ SanitizerPatchResult apptracer_exact_bulk_load(
    void* userdata, uint64_t, uint64_t src, uint32_t, uint32_t, uint32_t data, uint32_t) {
  if (!userdata) return SANITIZER_PATCH_SUCCESS;
  note_range(static_cast<SlotHeader*>(userdata), src, uint64_t{data & 0xffffu} * 16, kRead);
  return SANITIZER_PATCH_SUCCESS;
}

extern "C" __device__ __noinline__ SanitizerPatchResult apptracer_exact_bulk_store(
    void* userdata, uint64_t, uint64_t dst, uint32_t, uint32_t blocks) {
  if (!userdata) return SANITIZER_PATCH_SUCCESS;
  note_range(static_cast<SlotHeader*>(userdata), dst, uint64_t{blocks} * 16, kWrite);
  return SANITIZER_PATCH_SUCCESS;
}

// A reduction reads what was there and writes the result.
extern "C" __device__ __noinline__ SanitizerPatchResult apptracer_exact_bulk_reduce(
    void* userdata, uint64_t, uint64_t dst, uint32_t, uint32_t blocks) {
  if (!userdata) return SANITIZER_PATCH_SUCCESS;
  note_range(static_cast<SlotHeader*>(userdata), dst, uint64_t{blocks} * 16, kRead | kWrite);
  return SANITIZER_PATCH_SUCCESS;
}
