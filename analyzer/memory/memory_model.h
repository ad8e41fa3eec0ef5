// Where the memory went: each device's memory in use over time by owner
// (memory_owners.h), its peak, what was live then, and for each allocation
// and framework block when it was first and last used and which operation
// first wrote it (from the DVDG's accesses). A view over the trace model:
// allocations and sub_allocations rows for lifetimes, the DVDG's ops for
// uses. Host memory (pinned, mapped) is a "device" of its own per process.
//
// Lifetimes: an allocation from its alloc to its free; a framework block from
// when the allocator handed it out to when the program released it (PyTorch's
// free_requested_ns, else free_ns), as torch.cuda.memory_allocated() counts
// it. A segment's bytes no live block holds are its allocator's cache. At
// one moment frees and allocations count together (one point per time).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "analyzer/dvdg/graph.h"
#include "analyzer/dvdg/op_accesses.h"
#include "analyzer/memory/memory_owners.h"
#include "analyzer/trace/trace.h"

namespace apptracer::memory {

inline constexpr uint32_t kNoOp = UINT32_MAX;
inline constexpr uint32_t kNoItem = UINT32_MAX;

// Where and by whom an item was made: its process and device, the thread
// that allocated it (or had the block handed out) and, for an allocation,
// the call that made it. Items share them (a training trace's millions of
// blocks come from a few threads on a few devices), so an item holds the
// number of its own in MemoryItems::origins.
struct ItemOrigin {
  trace::ProcessId process = trace::kSingleProcess;
  trace::NullableInt device;  // none: host memory
  trace::NullableInt thread;
  trace::NullableInt call;

  friend bool operator<(const ItemOrigin& a, const ItemOrigin& b) {
    return std::tie(a.process, a.device, a.thread, a.call) < std::tie(b.process, b.device, b.thread, b.call);
  }
};

// An allocation or a framework block. A training trace has millions (one
// per tensor block), so nullable times are NullableInt, what items share
// is an ItemOrigin held apart, and the small fields sit together.
struct MemoryItem {
  enum class Kind : uint8_t { Allocation, Block };
  int64_t id = 0;  // allocations.id or sub_allocations.id
  int64_t bytes = 0;
  int64_t alloc_ns = 0;
  trace::NullableInt end_ns;  // none: live at the end of the trace
  // The first use's start and the last use's end (ops of the DVDG that read
  // or wrote it); none: nothing touched it.
  trace::NullableInt first_use_ns, last_use_ns;
  uint32_t origin = 0;  // its place in MemoryItems::origins
  uint32_t segment = kNoItem;  // a block: the segment item it lies in, where counted
  uint32_t producer = kNoOp;  // the op that first wrote it
  Kind kind = Kind::Allocation;
  Owner owner = Owner::Program;  // a segment's: FrameworkCache
  std::optional<SubAllocator> allocator;  // framework owners

  bool live_at(int64_t ns) const { return alloc_ns <= ns && (!end_ns || *end_ns > ns); }
  bool is_segment() const { return owner == Owner::FrameworkCache; }
};
static_assert(sizeof(MemoryItem) <= 64, "an item per tensor block: keep items to a cache line");

// The items (allocations, then framework blocks) and their origins.
struct MemoryItems {
  std::vector<MemoryItem> items;
  std::vector<ItemOrigin> origins;
  // (mapping's allocations.id, physical's): the physical memory a
  // virtual-memory mapping shows, whose use is the mapping's (kernels see
  // only the mapped addresses). By mapping id.
  std::vector<std::pair<int64_t, int64_t>> mapped_physical;

  const ItemOrigin& origin(const MemoryItem& item) const { return origins[item.origin]; }
};

// Memory of one device at one moment (after the changes at `ns`).
struct MemoryPoint {
  int64_t ns = 0;
  int64_t in_use = 0;    // every owner
  int64_t cached = 0;    // framework allocators' cached free space
  int64_t reserved = 0;  // framework allocators' segments (their blocks and cache)
  int64_t framework = 0;  // framework blocks live (torch.cuda.memory_allocated())
};

struct OwnerBytes {
  Owner owner = Owner::Program;
  std::optional<SubAllocator> allocator;
  int64_t bytes = 0;
  int64_t items = 0;
};

// A piece of the live set at the peak: an item, and the bytes of it that
// count then (a segment's: its cached free space).
struct LiveItem {
  uint32_t item = 0;
  int64_t bytes = 0;
};

// One step, as seen at its end (after every change before the next step).
struct StepMemory {
  int64_t number = 0;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  int64_t in_use = 0;
  int64_t live = 0;      // in use less the allocators' caches
  int64_t reserved = 0;  // framework segments
  int64_t framework_live = 0;  // framework blocks live (torch.cuda.memory_allocated())
  int64_t peak = 0;      // the most in use during the step
};

struct DeviceMemory {
  trace::ProcessId process = trace::kSingleProcess;
  trace::NullableInt device;  // none: host memory
  std::vector<MemoryPoint> points;  // by time, one per time
  int64_t peak_bytes = 0;
  std::vector<int64_t> peak_ns;  // moments in use rose to the peak (the first 8)
  // The moment at the peak described below: of those at the peak, the one
  // with the most live (the least cached). An allocator makes a segment
  // just before the block that needed it: then the block is live too.
  int64_t at_ns = 0;
  std::vector<OwnerBytes> at_peak;  // at at_ns, largest first
  std::vector<LiveItem> live_at_peak;  // at at_ns, largest first
  int64_t peak_live_bytes = 0;  // the most in use less the caches
  std::vector<StepMemory> steps;
};

struct MemoryModel : MemoryItems {
  std::vector<DeviceMemory> devices;  // by process, then device (host last)

  bool on_device(const MemoryItem& item, const DeviceMemory& device) const {
    return origin(item).process == device.process && origin(item).device == device.device;
  }
};

// The model of every device the trace (or its step window) shows, with
// uses from `graph` or, for a view that needs no graph, from the accesses
// it would be built from (both from the same trace). Items' producers are
// positions in the ops of the one given. The accesses themselves (not their
// ops and locations) are released once read: a training trace's take
// hundreds of MB the model no longer needs.
MemoryModel build_memory_model(trace::Trace& trace, const dvdg::Graph& graph);
MemoryModel build_memory_model(trace::Trace& trace, dvdg::OpAccesses& accesses);
// The same in two steps: the items (allocations, then framework blocks)
// read before the graph is built, so that the blocks' rows can go first
// (their items hold what the model needs of them), then the model of them
// over the graph.
MemoryItems read_memory_items(trace::Trace& trace);
MemoryModel build_memory_model(trace::Trace& trace, const dvdg::Graph& graph, MemoryItems items);

// The devices of a model built over the whole run, again for the step
// window `trace` is now limited to (Trace::limit_to_steps): peaks and steps
// inside it; the items, their uses and owners stay the whole run's, which
// see what the window does not (a block's producer made before it, the
// collectives an allocation was made in).
void limit_to_window(MemoryModel& model, trace::Trace& trace);

// A device's state at `ns`: after the changes at `ns` when `after`, else
// before them.
MemoryPoint state_at(const std::vector<MemoryPoint>& points, int64_t ns, bool after);

// "GPU 0", "host".
std::string device_name(trace::NullableInt device);

}  // namespace apptracer::memory
