#include "analyzer/memory/memory_model.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <unordered_map>

#include "analyzer/memory/library_workspaces.h"
#include "analyzer/trace/framework_context.h"
#include "analyzer/trace/memory_series.h"
#include "apptracer/saturating.h"

namespace apptracer::memory {

namespace {

using trace::Packed;

// A call's thread and span, by (process, correlation id): the outermost
// call carrying the id (a runtime call and the driver call inside it share it).
struct CallSpan {
  int64_t tid = 0;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
};
using CallKey = std::pair<trace::ProcessId, int64_t>;

// The calls that made allocations, from the whole trace (a step window
// limits api_calls, but allocations made before it still count).
std::map<CallKey, CallSpan> allocation_calls(trace::Trace& trace) {
  std::map<CallKey, CallSpan> calls;
  auto cursor = trace.cursor<ApiCallRow>(
      "WHERE correlation_id IN (SELECT alloc_correlation_id FROM allocations)");
  if (!cursor) return calls;
  Packed<ApiCallRow> row;
  while (cursor->next(row)) {
    auto [it, added] = calls.try_emplace({row.process, row.correlation_id},
                                         CallSpan{row.tid, row.start_ns, row.end_ns});
    if (!added && row.start_ns <= it->second.start_ns && row.end_ns >= it->second.end_ns)
      it->second = {row.tid, row.start_ns, row.end_ns};
  }
  return calls;
}

std::optional<Owner> host_owner(AllocKind kind) {
  switch (kind) {
    case AllocKind::PinnedHost:
    case AllocKind::WriteCombinedHost: return Owner::PinnedHost;
    case AllocKind::MappedHost: return Owner::MappedHost;
    default: return std::nullopt;
  }
}

// Each device's memory over time, its peak and steps, within the trace's
// step window when it has one.
std::vector<DeviceMemory> describe_devices(const MemoryModel& model, trace::Trace& trace);

// The item of an allocations or sub_allocations row: each kind's items
// were added in their rows' order, by id, so no index is kept (a training
// trace has millions of blocks). Blocks are the items from `blocks_begin` on.
uint32_t find_item(const std::vector<MemoryItem>& items, uint32_t blocks_begin, MemoryItem::Kind kind,
                   int64_t id) {
  auto first = items.begin(), last = items.end();
  (kind == MemoryItem::Kind::Block ? first : last) = items.begin() + blocks_begin;
  auto found = std::lower_bound(first, last, id, [](const MemoryItem& item, int64_t v) { return item.id < v; });
  return found != last && found->id == id ? static_cast<uint32_t>(found - items.begin()) : kNoItem;
}

// The items of the allocations and framework blocks, the allocations' first.
class ItemReader {
 public:
  explicit ItemReader(trace::Trace& trace) : trace_(trace) {}

  MemoryItems read() {
    read_allocations();
    read_blocks();
    return std::move(items_);
  }

  // The trace does not say which physical handle a cuMemMap mapped: the one
  // of its process and device made last before it, still live and at least
  // as large, as allocators create a handle and map it at once (XLA's pool,
  // PyTorch's expandable segments).
  void match_mappings(const std::vector<const Packed<AllocationRow>*>& mappings,
                      std::vector<const Packed<AllocationRow>*> physical) {
    auto place = [](const Packed<AllocationRow>* row) { return std::make_tuple(row->process, row->device, row->alloc_ns); };
    std::sort(physical.begin(), physical.end(), [&](auto* a, auto* b) { return place(a) < place(b); });
    for (const Packed<AllocationRow>* mapping : mappings) {
      auto after = std::upper_bound(physical.begin(), physical.end(), mapping,
                                    [&](auto* a, auto* b) { return place(a) < place(b); });
      while (after != physical.begin()) {
        const Packed<AllocationRow>* handle = *--after;
        if (handle->process != mapping->process || handle->device != mapping->device) break;
        if ((handle->free_ns && *handle->free_ns < mapping->alloc_ns) || handle->bytes < mapping->bytes) continue;
        items_.mapped_physical.emplace_back(mapping->id, handle->id);
        break;
      }
    }
  }

  void read_allocations() {
    items_.items.reserve(trace_.rows<AllocationRow>().size() + trace_.rows<SubAllocationRow>().size());
    FrameworkSegments segments(trace_);
    CommunicationCalls communication(trace_);
    CompilerRanges compiling(trace_);
    std::map<CallKey, CallSpan> calls = allocation_calls(trace_);
    std::vector<const Packed<AllocationRow>*> mappings, physical;
    for (const Packed<AllocationRow>& row : trace_.rows<AllocationRow>()) {
      if (row.kind == AllocKind::VmmMapping) mappings.push_back(&row);
      if (row.kind == AllocKind::VmmPhysical) physical.push_back(&row);
      if (!holds_own_memory(row.kind) || row.kind == AllocKind::PageableHost) continue;
      MemoryItem item;
      item.kind = MemoryItem::Kind::Allocation;
      item.id = row.id;
      item.bytes = row.bytes;
      item.alloc_ns = row.alloc_ns;
      item.end_ns = row.free_ns;
      ItemOrigin origin{row.process, row.device, row.alloc_tid, row.alloc_correlation_id};
      std::optional<SubAllocator> holder = segments.holder(row.process, row.address, row.bytes);
      bool in_communication = false, in_compiler = false;
      if (row.alloc_correlation_id) {
        auto call = calls.find({row.process, *row.alloc_correlation_id});
        if (call != calls.end()) {
          const CallSpan& span = call->second;
          in_communication = communication.contains(span.tid, span.start_ns, span.end_ns);
          in_compiler = compiling.contains(span.tid, span.start_ns, span.end_ns);
        }
      }
      std::optional<Owner> library = library_owner(row.kind, in_communication, in_compiler,
                                                   segments.framework_process(row.process), holder.has_value());
      if (std::optional<Owner> host = host_owner(row.kind)) {
        item.owner = *host;
        origin.device = std::nullopt;
      } else if (holder) {
        item.owner = Owner::FrameworkCache;
        item.allocator = holder;
      } else if (library) {
        item.owner = *library;
      } else if (row.kind == AllocKind::Managed) {
        item.owner = Owner::Managed;
      } else if (compiling.compiled_in(row.process)) {
        // A JAX program makes no device memory itself: XLA's allocator does,
        // its pool mapped once (three quarters of the GPU by default) or,
        // per-buffer, each buffer. Not the program's: its buffers inside
        // the pool are not recorded.
        item.owner = Owner::Xla;
      } else {
        item.owner = Owner::Program;
      }
      if (!origin.device && !host_owner(row.kind)) continue;  // host memory of no kind we count
      add(item, origin);
    }
    match_mappings(mappings, physical);
  }

  void read_blocks() {
    blocks_begin_ = static_cast<uint32_t>(items_.items.size());
    for (const Packed<SubAllocationRow>& row : trace_.rows<SubAllocationRow>()) {
      MemoryItem item;
      item.kind = MemoryItem::Kind::Block;
      item.id = row.id;
      item.owner = row.pool_id && *row.pool_id > 0 ? Owner::GraphPool : Owner::FrameworkTensors;
      item.allocator = row.allocator;
      ItemOrigin origin{row.process, row.device, row.alloc_tid, std::nullopt};
      item.bytes = row.block_bytes.value_or(row.bytes);
      item.alloc_ns = row.alloc_ns;
      item.end_ns = row.free_requested_ns ? row.free_requested_ns : row.free_ns;
      if (row.parent_alloc_id) {
        uint32_t parent = find_item(items_.items, blocks_begin_, MemoryItem::Kind::Allocation, *row.parent_alloc_id);
        if (parent != kNoItem && items_.items[parent].is_segment()) {
          item.segment = parent;
          if (!origin.device) origin.device = items_.origin(items_.items[parent]).device;
        }
      }
      if (!origin.device) continue;
      add(item, origin);
    }
  }

  void add(MemoryItem& item, const ItemOrigin& origin) {
    auto [known, added] = origin_numbers_.try_emplace(origin, static_cast<uint32_t>(items_.origins.size()));
    if (added) items_.origins.push_back(origin);
    item.origin = known->second;
    items_.items.push_back(item);
  }

  trace::Trace& trace_;
  MemoryItems items_;
  std::map<ItemOrigin, uint32_t> origin_numbers_;
  uint32_t blocks_begin_ = 0;
};

class ModelBuilder {
 public:
  ModelBuilder(trace::Trace& trace, const dvdg::OpTable& table) : trace_(trace), table_(table) {}

  // The uses are read first, by location, so that the accesses can go
  // before the items are made: a training trace's accesses and items
  // together were the most the memory view held.
  template <typename Uses, typename Release>
  MemoryModel build(const Uses& uses, Release&& release) {
    std::vector<LocationUse> by_location = read_uses(uses);
    release();
    return finish(ItemReader(trace_).read(), by_location);
  }

  template <typename Uses>
  MemoryModel build_from_items(const Uses& uses, MemoryItems items) {
    return finish(std::move(items), read_uses(uses));
  }

 private:
  uint32_t item_of(const dvdg::Location& location) const {
    if (location.sub_allocation_id)
      return find_item(model_.items, blocks_begin_, MemoryItem::Kind::Block, *location.sub_allocation_id);
    if (!location.alloc_id) return kNoItem;
    uint32_t item = find_item(model_.items, blocks_begin_, MemoryItem::Kind::Allocation, *location.alloc_id);
    if (item != kNoItem) return item;
    const auto& mapped = model_.mapped_physical;
    auto found = std::lower_bound(mapped.begin(), mapped.end(), std::make_pair(*location.alloc_id, INT64_MIN));
    if (found == mapped.end() || found->first != *location.alloc_id) return kNoItem;
    return find_item(model_.items, blocks_begin_, MemoryItem::Kind::Allocation, found->second);
  }

  // What touched an item: nothing, only one library's kernels, or other work.
  struct Touches {
    bool touched = false;
    bool other = false;
    std::optional<Owner> library;
    void add(std::optional<Owner> by) {
      if (!touched) library = by;
      touched = true;
      if (!by || by != library) other = true;
    }
  };

  // A location's first and last use, the op that first wrote it, and what touched it.
  struct LocationUse {
    trace::NullableInt first_ns, last_ns;
    uint32_t producer = kNoOp;
    Touches touches;
  };

  MemoryModel finish(MemoryItems items, const std::vector<LocationUse>& by_location) {
    static_cast<MemoryItems&>(model_) = std::move(items);
    blocks_begin_ = static_cast<uint32_t>(
        std::partition_point(model_.items.begin(), model_.items.end(),
                             [](const MemoryItem& item) { return item.kind == MemoryItem::Kind::Allocation; }) -
        model_.items.begin());
    give_uses(by_location);
    recognize_workspaces();
    model_.devices = describe_devices(model_, trace_);
    return std::move(model_);
  }

  // First and last use and the producer of each location, from the ops
  // that read or wrote it (`uses`: the graph's values or the accesses it is
  // built from, which touch the same locations). The producer is the first
  // op to write it; of ops starting together, the first issued, then the
  // first in the trace: not the first in `uses`' order, which differs.
  template <typename Uses>
  std::vector<LocationUse> read_uses(const Uses& uses) {
    std::vector<LocationUse> by_location(table_.locations.size());
    auto earlier = [](const dvdg::Op& a, const dvdg::Op& b) {
      return std::tie(a.start_ns, a.issue_ns, a.kind, a.source_id) < std::tie(b.start_ns, b.issue_ns, b.kind, b.source_id);
    };
    uses.for_each_location_use([&](uint32_t op, uint32_t location, bool writes) {
      const dvdg::Op& o = table_.ops[op];
      if (trace::is_lifetime_op(o.kind)) return;
      LocationUse& use = by_location[location];
      use.touches.add(library_of(op));
      if (!use.first_ns || o.start_ns < *use.first_ns) use.first_ns = o.start_ns;
      if (!use.last_ns || o.end_ns > *use.last_ns) use.last_ns = o.end_ns;
      if (writes && (use.producer == kNoOp || earlier(o, table_.ops[use.producer]))) use.producer = op;
    });
    return by_location;
  }

  // Each item's uses: its location's, or its mappings' (physical memory
  // several mappings show is used from the first of their uses to the last).
  void give_uses(const std::vector<LocationUse>& by_location) {
    touches_.assign(model_.items.size(), Touches{});
    for (size_t l = 0; l < table_.locations.size(); ++l) {
      uint32_t index = item_of(table_.locations[l]);
      if (index == kNoItem) continue;
      MemoryItem& item = model_.items[index];
      const LocationUse& use = by_location[l];
      if (!use.first_ns) continue;
      bool first = !item.first_use_ns || *use.first_ns < *item.first_use_ns;
      if (first) item.first_use_ns = use.first_ns;
      if (!item.last_use_ns || *use.last_ns > *item.last_use_ns) item.last_use_ns = use.last_ns;
      if (first || item.producer == kNoOp) item.producer = use.producer;
      Touches& touches = touches_[index];
      if (!touches.touched) {
        touches = use.touches;
      } else if (use.touches.other || use.touches.library != touches.library) {
        touches.other = true;
      }
    }
  }

  // The library whose kernel `op` is; none for any other op.
  std::optional<Owner> library_of(uint32_t op) {
    const dvdg::Op& o = table_.ops[op];
    if (o.kind != trace::OpKind::Kernel || o.name_id == 0) return std::nullopt;
    auto known = kernel_libraries_.find(o.name_id);
    if (known != kernel_libraries_.end()) return known->second;
    auto name = table_.names.find(o.name_id);
    std::optional<Owner> library =
        kernel_library(name != table_.names.end() ? std::string_view(name->second) : trace_.string(o.name_id, ""));
    kernel_libraries_.emplace(o.name_id, library);
    return library;
  }

  void recognize_workspaces();

  trace::Trace& trace_;
  const dvdg::OpTable& table_;
  MemoryModel model_;
  std::vector<Touches> touches_;  // by item
  std::unordered_map<int64_t, std::optional<Owner>> kernel_libraries_;  // by kernel name id
  uint32_t blocks_begin_ = 0;  // items: allocations before, blocks from here
};

// A device's memory over time: each item's allocation and end as changes
// (a point of deltas, at the change's time), summed in place into one point
// per time. A training trace has millions: no second vector holds them.
std::vector<MemoryPoint> points_of(const MemoryModel& model, const std::vector<uint32_t>& items) {
  std::vector<MemoryPoint> points;
  points.reserve(2 * items.size());
  auto add = [&](const MemoryItem& item, int64_t ns, int sign) {
    auto at = [&](int64_t in_use, int64_t cached, int64_t reserved, int64_t framework) {
      points.push_back({ns, sign * in_use, sign * cached, sign * reserved, sign * framework});
    };
    bool framework = item.kind == MemoryItem::Kind::Block;  // a workspace block counts as the allocator's too
    // A block inside a counted segment takes its bytes from the cache.
    if (item.is_segment()) return at(item.bytes, item.bytes, item.bytes, 0);
    if (item.segment != kNoItem) return at(0, -item.bytes, 0, item.bytes);
    at(item.bytes, 0, 0, framework ? item.bytes : 0);
  };
  for (uint32_t index : items) {
    const MemoryItem& item = model.items[index];
    add(item, item.alloc_ns, 1);
    if (item.end_ns) add(item, *item.end_ns, -1);
  }
  // One point per time: memory freed and reused in one instant is never
  // counted twice, and changes at one time sum alike in any order (no
  // stable sort's buffer).
  std::sort(points.begin(), points.end(), [](const MemoryPoint& a, const MemoryPoint& b) { return a.ns < b.ns; });
  MemoryPoint now;
  size_t kept = 0;
  for (const MemoryPoint& change : points) {
    now.ns = change.ns;
    now.in_use = saturating_add(now.in_use, change.in_use);
    now.cached = saturating_add(now.cached, change.cached);
    now.reserved = saturating_add(now.reserved, change.reserved);
    now.framework = saturating_add(now.framework, change.framework);
    if (kept > 0 && points[kept - 1].ns == now.ns) {
      points[kept - 1] = now;
    } else {
      points[kept++] = now;
    }
  }
  points.resize(kept);
  return points;
}

}  // namespace

MemoryPoint state_at(const std::vector<MemoryPoint>& points, int64_t ns, bool after) {
  auto found = after ? std::upper_bound(points.begin(), points.end(), ns,
                                        [](int64_t t, const MemoryPoint& p) { return t < p.ns; })
                     : std::lower_bound(points.begin(), points.end(), ns,
                                        [](const MemoryPoint& p, int64_t t) { return p.ns < t; });
  if (found == points.begin()) return MemoryPoint{ns, 0, 0, 0, 0};
  MemoryPoint state = *std::prev(found);
  state.ns = ns;
  return state;
}

namespace {

// The moments in [from, to) where in use rose to its most.
void find_peak(DeviceMemory& device, int64_t from, int64_t to) {
  int64_t previous = INT64_MIN, live_at = INT64_MIN;
  auto see = [&](const MemoryPoint& p) {
    int64_t live = p.in_use - p.cached;
    device.peak_live_bytes = std::max(device.peak_live_bytes, live);
    if (p.in_use > device.peak_bytes || device.peak_ns.empty()) {
      device.peak_bytes = p.in_use;
      device.peak_ns = {p.ns};
      device.at_ns = p.ns;
      live_at = live;
    } else if (p.in_use == device.peak_bytes) {
      if (previous < p.in_use && device.peak_ns.size() < 8) device.peak_ns.push_back(p.ns);
      if (live > live_at) {
        device.at_ns = p.ns;
        live_at = live;
      }
    }
    previous = p.in_use;
  };
  if (from != INT64_MIN) see(state_at(device.points, from, false));
  for (const MemoryPoint& p : device.points) {
    if (p.ns >= from && p.ns < to) see(p);
  }
}

void describe_peak(const MemoryModel& model, const std::vector<uint32_t>& items, DeviceMemory& device) {
  if (device.peak_ns.empty()) return;
  int64_t at = device.at_ns;
  std::unordered_map<uint32_t, int64_t> cached;  // segment -> its free bytes
  for (uint32_t index : items) {
    const MemoryItem& item = model.items[index];
    if (item.is_segment() && item.live_at(at)) cached[index] += item.bytes;
  }
  for (uint32_t index : items) {
    const MemoryItem& item = model.items[index];
    if (item.is_segment() || !item.live_at(at)) continue;
    if (item.segment != kNoItem) cached[item.segment] -= item.bytes;
    device.live_at_peak.push_back({index, item.bytes});
  }
  for (const auto& [segment, bytes] : cached) device.live_at_peak.push_back({segment, bytes});
  std::stable_sort(device.live_at_peak.begin(), device.live_at_peak.end(), [&](const LiveItem& a, const LiveItem& b) {
    return a.bytes != b.bytes ? a.bytes > b.bytes : model.items[a.item].id < model.items[b.item].id;
  });
  std::map<std::pair<Owner, std::optional<SubAllocator>>, OwnerBytes> owners;
  for (const LiveItem& live : device.live_at_peak) {
    const MemoryItem& item = model.items[live.item];
    // A library's workspace is the library's, whichever allocator made it.
    std::optional<SubAllocator> allocator = is_library_memory(item.owner) ? std::nullopt : item.allocator;
    OwnerBytes& sum = owners[{item.owner, allocator}];
    sum.owner = item.owner;
    sum.allocator = allocator;
    sum.bytes += live.bytes;
    sum.items += 1;
  }
  for (const auto& [key, sum] : owners) device.at_peak.push_back(sum);
  std::stable_sort(device.at_peak.begin(), device.at_peak.end(),
                   [](const OwnerBytes& a, const OwnerBytes& b) { return a.bytes > b.bytes; });
}

// Each step's memory at its end, and the most in use during it.
void describe_steps(const trace::ProcessSteps& steps, const trace::StepWindow* window, DeviceMemory& device) {
  for (const trace::Step& step : steps.steps) {
    if (window && !window->holds(device.process, step.start_ns)) continue;
    StepMemory memory;
    memory.number = step.number;
    memory.start_ns = step.start_ns;
    memory.end_ns = step.end_ns;
    MemoryPoint end = state_at(device.points, step.end_ns, false);
    memory.in_use = end.in_use;
    memory.live = end.in_use - end.cached;
    memory.reserved = end.reserved;
    memory.framework_live = end.framework;
    memory.peak = state_at(device.points, step.start_ns, false).in_use;
    auto first = std::lower_bound(device.points.begin(), device.points.end(), step.start_ns,
                                  [](const MemoryPoint& p, int64_t t) { return p.ns < t; });
    for (auto p = first; p != device.points.end() && p->ns < step.end_ns; ++p)
      memory.peak = std::max(memory.peak, p->in_use);
    device.steps.push_back(memory);
  }
}

// Which of the program's and the framework's pieces are a library's
// workspace (library_workspaces.h says from what, and why).
void ModelBuilder::recognize_workspaces() {
  const trace::FrameworkContexts* contexts = nullptr;  // read at the first piece that may be one
  std::unordered_map<int64_t, std::optional<Owner>> op_libraries;  // by op name id
  // Each process's kernels by issue time, with their library.
  std::map<trace::ProcessId, std::vector<std::pair<int64_t, std::optional<Owner>>>> kernels;
  for (uint32_t op = 0; op < table_.ops.size(); ++op) {
    if (table_.ops[op].kind == trace::OpKind::Kernel)
      kernels[table_.ops[op].process].emplace_back(table_.ops[op].issue_ns, library_of(op));
  }
  for (auto& [process, issued] : kernels) {
    std::stable_sort(issued.begin(), issued.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  }
  const trace::TraceSteps& steps = trace_.steps();
  for (uint32_t i = 0; i < model_.items.size(); ++i) {
    MemoryItem& item = model_.items[i];
    bool programs = item.owner == Owner::FrameworkTensors || item.owner == Owner::Program || item.owner == Owner::Xla;
    const ItemOrigin& origin = model_.origin(item);
    if ((!programs && item.owner != Owner::Library) || !origin.device || touches_[i].other) continue;
    // Without a framework allocator, an unused allocation may as well be the program's.
    if ((item.owner == Owner::Program || item.owner == Owner::Xla) && !touches_[i].touched) continue;
    const std::vector<std::pair<int64_t, std::optional<Owner>>>* issued = nullptr;
    if (auto found = kernels.find(origin.process); found != kernels.end()) issued = &found->second;
    auto issued_from = [&](int64_t ns) {
      return std::lower_bound(issued->begin(), issued->end(), ns,
                              [](const auto& kernel, int64_t t) { return kernel.first < t; });
    };
    if (!contexts) contexts = &trace_.framework_contexts();
    trace::FrameworkContext context = contexts->issued(origin.process, origin.thread, item.alloc_ns);
    std::optional<Owner> site;
    if (context.op_id) {
      auto [known, added] = op_libraries.try_emplace(context.op_id);
      if (added) known->second = op_library(trace_.string(context.op_id, ""));
      site = known->second;
    }
    // Without an op, the kernel issued next says. So too where ops were
    // sampled and the one around it is no library's: it may be an outer op
    // (autograd's evaluate_function around an unrecorded aten::mm) whose
    // library call inside went unrecorded, as a first backward's cuBLAS
    // workspace does.
    bool op_may_hide_a_call = !context.op_id || contexts->op_sample_every() > 1;
    if (!site && op_may_hide_a_call && issued && issued_from(item.alloc_ns) != issued->end()) {
      site = issued_from(item.alloc_ns)->second;
    }
    if (!site || (touches_[i].touched && touches_[i].library != site)) continue;
    bool held_to_end = !item.end_ns;
    if (const trace::ProcessSteps* process = steps.find(origin.process); process && !process->steps.empty())
      held_to_end = held_to_end || *item.end_ns >= process->steps.back().end_ns;
    bool within_call = false;
    if (item.end_ns && context.op_id) {
      within_call = *item.end_ns <= context.op_end_ns;
    } else if (item.end_ns && issued) {
      within_call = std::all_of(issued_from(item.alloc_ns), issued_from(*item.end_ns),
                                [&](const auto& kernel) { return kernel.second == site; });
    }
    if (held_to_end || within_call) item.owner = *site;
  }
}

std::vector<DeviceMemory> describe_devices(const MemoryModel& model, trace::Trace& trace) {
  std::vector<DeviceMemory> devices;
  std::map<std::pair<trace::ProcessId, int64_t>, std::vector<uint32_t>> by_device;  // host: INT64_MAX
  for (uint32_t i = 0; i < model.items.size(); ++i) {
    const ItemOrigin& origin = model.origin(model.items[i]);
    by_device[{origin.process, origin.device.value_or(INT64_MAX)}].push_back(i);
  }
  const trace::StepWindow* window = trace.window();
  const trace::TraceSteps& steps = trace.steps();
  for (const auto& [key, items] : by_device) {
    DeviceMemory device;
    device.process = key.first;
    if (key.second != INT64_MAX) device.device = key.second;
    device.points = points_of(model, items);
    std::optional<std::pair<int64_t, int64_t>> span;
    if (window) {
      span = window->span(device.process);
      if (!span) continue;
    }
    find_peak(device, span ? span->first : INT64_MIN, span ? span->second : INT64_MAX);
    describe_peak(model, items, device);
    if (const trace::ProcessSteps* process = steps.find(device.process))
      describe_steps(*process, window, device);
    devices.push_back(std::move(device));
  }
  return devices;
}

}  // namespace

MemoryModel build_memory_model(trace::Trace& trace, const dvdg::Graph& graph) {
  return ModelBuilder(trace, graph).build(graph, [] {});
}

MemoryItems read_memory_items(trace::Trace& trace) { return ItemReader(trace).read(); }

MemoryModel build_memory_model(trace::Trace& trace, const dvdg::Graph& graph, MemoryItems items) {
  return ModelBuilder(trace, graph).build_from_items(graph, std::move(items));
}

void limit_to_window(MemoryModel& model, trace::Trace& trace) {
  // The whole run's points go before the window's are made (they are made
  // from the items alone): a training trace's are over 100 MB a device.
  model.devices = {};
  model.devices = describe_devices(model, trace);
}

MemoryModel build_memory_model(trace::Trace& trace, dvdg::OpAccesses& accesses) {
  return ModelBuilder(trace, accesses).build(accesses, [&] {
    std::vector<dvdg::Access>().swap(accesses.accesses);
    std::vector<dvdg::AccessPosition>().swap(accesses.positions);
    std::vector<uint32_t>().swap(accesses.access_begin);
  });
}

std::string device_name(trace::NullableInt device) {
  return device ? "GPU " + std::to_string(*device) : std::string("host");
}

}  // namespace apptracer::memory
