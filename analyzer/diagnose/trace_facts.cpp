#include "analyzer/trace/trace.h"
#include "trace_facts.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>

#include "apptracer/row_reader.h"
#include "graph_builder.h"
#include "labels.h"

namespace apptracer::diagnose {

namespace {

void widen(TraceFacts& facts, std::optional<int64_t> ns) {
  if (!ns || *ns <= 0) return;
  if (facts.start_ns == 0 || *ns < facts.start_ns) facts.start_ns = *ns;
  facts.end_ns = std::max(facts.end_ns, *ns);
}

void read_calls(Database& db, TraceFacts& facts) {
  // Runtime calls, and driver calls no runtime call made (CUDA 13 gives a
  // driver call inside a runtime call the runtime call's correlation id).
  Statement rows = db.prepare(
      "SELECT a.id, a.correlation_id, coalesce(s.text, '?'), a.tid, a.start_ns, a.end_ns, a.domain "
      "FROM api_calls a LEFT JOIN strings s ON s.id = a.name_id "
      "WHERE a.domain = 1 OR (a.domain = 2 AND a.parent_correlation_id IS NULL) "
      "ORDER BY a.start_ns, a.id");
  while (rows.step()) {
    HostCall call{rows.int64(0), rows.text(2), rows.int64(3), rows.int64(4), rows.int64(5)};
    bool runtime = rows.int64(6) == 1;
    auto [it, inserted] = facts.calls.emplace(rows.int64(1), call);
    if (!inserted && runtime) it->second = call;
    facts.calls_by_thread[call.tid].push_back(facts.all_calls.size());
    facts.all_calls.push_back(call);
    widen(facts, call.start_ns);
    widen(facts, call.end_ns);
  }
}

std::optional<int64_t> device_of(const Transfer& t, std::optional<int64_t> src_device,
                                 std::optional<int64_t> dst_device) {
  // A copy belongs to the device whose memory it touches (the destination's first).
  if (is_device_memory(t.dst_memory) || t.dst_memory == MemoryKind::Managed) {
    if (dst_device) return dst_device;
  }
  return src_device ? src_device : dst_device;
}

void read_copies(Database& db, TraceFacts& facts) {
  for_each_row<MemcpyRow>(db, "ORDER BY id", [&](const MemcpyRow& row) {
    Transfer t;
    t.id = *row.id.value;
    t.kind = row.kind;
    t.bytes = row.bytes;
    t.src_memory = row.src_memory;
    t.dst_memory = row.dst_memory;
    t.src_alloc = row.src_alloc_id;
    t.dst_alloc = row.dst_alloc_id;
    t.src_address = row.src_address;
    t.dst_address = row.dst_address;
    t.src_offset = row.src_offset;
    t.dst_offset = row.dst_offset;
    t.src_numa = row.src_numa_node;
    t.dst_numa = row.dst_numa_node;
    t.device = device_of(t, row.src_device, row.dst_device);
    t.stream = row.stream;
    t.is_async = row.is_async != 0;
    t.correlation = row.call_correlation_id;
    t.api_start_ns = row.api_start_ns;
    t.gpu_start_ns = row.gpu_start_ns;
    t.gpu_end_ns = row.gpu_end_ns;
    widen(facts, t.gpu_start_ns);
    widen(facts, t.gpu_end_ns);
    facts.copies.push_back(t);
  });
}

void read_memsets(Database& db, TraceFacts& facts) {
  for_each_row<MemsetRow>(db, "ORDER BY id", [&](const MemsetRow& row) {
    Transfer t;
    t.is_memset = true;
    t.id = *row.id.value;
    t.bytes = row.bytes;
    t.src_memory = t.dst_memory = row.memory;
    t.dst_alloc = row.alloc_id;
    t.dst_address = row.address;
    t.dst_offset = row.alloc_offset;
    t.device = row.device;
    t.stream = row.stream;
    t.is_async = row.is_async != 0;
    t.correlation = row.call_correlation_id;
    t.api_start_ns = row.api_start_ns;
    t.gpu_start_ns = row.gpu_start_ns;
    t.gpu_end_ns = row.gpu_end_ns;
    widen(facts, t.gpu_start_ns);
    widen(facts, t.gpu_end_ns);
    facts.memsets.push_back(t);
  });
}

void read_kernels(Database& db, TraceFacts& facts) {
  Statement rows = db.prepare(
      "SELECT k.id, coalesce(d.text, m.text, 'kernel'), k.device, k.stream, k.call_correlation_id, "
      "k.api_start_ns, k.gpu_start_ns, k.gpu_end_ns FROM kernels k "
      "LEFT JOIN strings d ON d.id = k.demangled_id LEFT JOIN strings m ON m.id = k.name_id "
      "ORDER BY k.id");
  while (rows.step()) {
    Kernel k;
    k.id = rows.int64(0);
    k.name = rows.text(1);
    k.device = rows.optional_int64(2);
    k.stream = rows.optional_int64(3);
    k.correlation = rows.optional_int64(4);
    k.api_start_ns = rows.optional_int64(5);
    k.gpu_start_ns = rows.optional_int64(6);
    k.gpu_end_ns = rows.optional_int64(7);
    widen(facts, k.gpu_start_ns);
    widen(facts, k.gpu_end_ns);
    facts.kernels.push_back(std::move(k));
  }
}

void read_syncs(Database& db, TraceFacts& facts) {
  for_each_row<SyncRow>(db, "ORDER BY start_ns, id", [&](const SyncRow& row) {
    Sync sync;
    sync.id = *row.id.value;
    sync.kind = row.kind;
    sync.device = row.device;
    sync.stream = row.stream;
    sync.correlation = row.call_correlation_id;
    sync.tid = row.tid;
    sync.start_ns = row.start_ns;
    sync.end_ns = row.end_ns;
    facts.syncs.push_back(sync);
  });
}

void read_allocations(Database& db, TraceFacts& facts) {
  for_each_row<AllocationRow>(db, "ORDER BY id", [&](const AllocationRow& row) {
    Allocation a;
    a.id = *row.id.value;
    a.kind = row.kind;
    a.address = row.address;
    a.bytes = row.bytes;
    a.device = row.device;
    a.numa_node = row.numa_node;
    a.alloc_correlation = row.alloc_correlation_id;
    a.free_correlation = row.free_correlation_id;
    a.alloc_ns = row.alloc_ns;
    a.free_ns = row.free_ns;
    widen(facts, a.alloc_ns);
    widen(facts, a.free_ns);
    facts.allocations.push_back(a);
  });
}

void read_annotations(Database& db, TraceFacts& facts) {
  Statement ranges = db.prepare(
      "SELECT coalesce(s.text, '?'), r.tid, r.start_ns, coalesce(r.end_ns, r.start_ns), "
      "coalesce(r.depth, 0) FROM nvtx_ranges r LEFT JOIN strings s ON s.id = r.name_id "
      "ORDER BY r.start_ns");
  while (ranges.step()) {
    facts.nvtx.push_back({ranges.text(0), ranges.optional_int64(1), ranges.int64(2),
                          ranges.int64(3), ranges.int64(4)});
  }
  Statement advice = db.prepare("SELECT id, advice, alloc_id, ns FROM mem_advice ORDER BY ns, id");
  while (advice.step()) {
    facts.advice.push_back({advice.int64(0), static_cast<MemAdvice>(advice.int64(1)),
                            advice.optional_int64(2), advice.int64(3)});
  }
  Statement devices = db.prepare("SELECT id, coalesce(name, ''), numa_node FROM devices ORDER BY id");
  while (devices.step()) {
    facts.devices.push_back({devices.int64(0), devices.text(1), devices.optional_int64(2)});
  }
}

template <typename Rows>
const typename Rows::value_type* by_id(const Rows& rows, int64_t id) {
  auto found = std::lower_bound(rows.begin(), rows.end(), id,
                                [](const auto& row, int64_t wanted) { return row.id < wanted; });
  return found != rows.end() && found->id == id ? &*found : nullptr;
}

}  // namespace

MemoryKind Transfer::host_memory() const {
  if (kind == CopyKind::HtoD) return src_memory;
  if (kind == CopyKind::DtoH) return dst_memory;
  return MemoryKind::Unknown;
}

std::optional<int64_t> Transfer::host_numa() const {
  if (kind == CopyKind::HtoD) return src_numa;
  if (kind == CopyKind::DtoH) return dst_numa;
  return std::nullopt;
}

std::optional<int64_t> Transfer::host_alloc() const {
  if (kind == CopyKind::HtoD) return src_alloc;
  if (kind == CopyKind::DtoH) return dst_alloc;
  return std::nullopt;
}

const HostCall* TraceFacts::call(std::optional<int64_t> correlation) const {
  if (!correlation) return nullptr;
  auto found = calls.find(*correlation);
  return found == calls.end() ? nullptr : &found->second;
}

const Allocation* TraceFacts::allocation(std::optional<int64_t> id) const {
  return id ? by_id(allocations, *id) : nullptr;
}

const Kernel* TraceFacts::kernel(int64_t id) const { return by_id(kernels, id); }
const Transfer* TraceFacts::copy(int64_t id) const { return by_id(copies, id); }

const Device* TraceFacts::device(std::optional<int64_t> id) const {
  return id ? by_id(devices, *id) : nullptr;
}

const HostCall* TraceFacts::next_call_on_thread(const HostCall& call) const {
  auto thread = calls_by_thread.find(call.tid);
  if (thread == calls_by_thread.end()) return nullptr;
  const std::vector<size_t>& order = thread->second;
  auto after = std::upper_bound(order.begin(), order.end(), call, [&](const HostCall& c, size_t i) {
    const HostCall& other = all_calls[i];
    return c.start_ns != other.start_ns ? c.start_ns < other.start_ns : c.id < other.id;
  });
  return after == order.end() ? nullptr : &all_calls[*after];
}

std::string TraceFacts::nvtx_at(std::optional<int64_t> tid, int64_t ns) const {
  const NvtxRange* innermost = nullptr;
  for (const NvtxRange& range : nvtx) {
    if (range.start_ns > ns) break;
    if (range.end_ns < ns) continue;
    if (tid && range.tid && *range.tid != *tid) continue;
    // Ranges are sorted by start: a later start inside is a nested one.
    innermost = &range;
  }
  return innermost ? innermost->name : std::string();
}

std::string TraceFacts::call_site(std::optional<int64_t> correlation) const {
  const HostCall* found = call(correlation);
  if (!found) return "";
  return found->name + " (thread " + std::to_string(found->tid) + ")";
}

std::unordered_map<int64_t, Intervals> TraceFacts::busy_by_device() const {
  std::unordered_map<int64_t, Intervals> busy;
  auto add = [&](std::optional<int64_t> device, std::optional<int64_t> start,
                 std::optional<int64_t> end) {
    if (!start || !end || *end < *start) return;
    busy[device.value_or(0)].emplace_back(*start, *end);
  };
  for (const Kernel& k : kernels) add(k.device, k.gpu_start_ns, k.gpu_end_ns);
  for (const Transfer& t : copies) add(t.device, t.gpu_start_ns, t.gpu_end_ns);
  for (const Transfer& t : memsets) add(t.device, t.gpu_start_ns, t.gpu_end_ns);
  for (auto& [device, intervals] : busy) merge_intervals(intervals);
  return busy;
}

TraceFacts read_trace_facts(Database& db) {
  TraceFacts facts;
  read_calls(db, facts);
  read_copies(db, facts);
  read_memsets(db, facts);
  read_kernels(db, facts);
  read_syncs(db, facts);
  read_allocations(db, facts);
  read_annotations(db, facts);
  trace::Trace trace(db);
  facts.um = trace.unified_memory();
  facts.graph = dvdg::build_graph_from_trace(trace);
  return facts;
}

void merge_intervals(Intervals& intervals) {
  std::sort(intervals.begin(), intervals.end());
  size_t kept = 0;
  for (const auto& interval : intervals) {
    if (kept > 0 && interval.first <= intervals[kept - 1].second) {
      intervals[kept - 1].second = std::max(intervals[kept - 1].second, interval.second);
    } else {
      intervals[kept++] = interval;
    }
  }
  intervals.resize(kept);
}

int64_t covered_ns(const Intervals& merged, int64_t from, int64_t to) {
  int64_t total = 0;
  for (const auto& [start, end] : merged) {
    total = saturating_add(total, elapsed_ns(std::max(start, from), std::min(end, to)));
  }
  return total;
}

std::string transfer_name(const Transfer& transfer) {
  if (transfer.is_memset) return "memset of " + dvdg::format_bytes(transfer.bytes);
  return std::string(to_string(transfer.kind)) + " copy of " + dvdg::format_bytes(transfer.bytes);
}

std::string allocation_name(const TraceFacts& facts, std::optional<int64_t> alloc_id) {
  const Allocation* found = facts.allocation(alloc_id);
  if (!found) return "memory in no known allocation";
  std::string name = "alloc #" + std::to_string(found->id) + " (" +
                     std::string(to_string(found->kind)) + ", " +
                     dvdg::format_bytes(found->bytes);
  if (found->device) name += ", device " + std::to_string(*found->device);
  return name + ")";
}

std::string format_ns(int64_t ns) {
  char text[32];
  double value = static_cast<double>(ns);
  if (ns >= 1'000'000'000) {
    std::snprintf(text, sizeof text, "%.2f s", value / 1e9);
  } else if (ns >= 1'000'000) {
    std::snprintf(text, sizeof text, "%.2f ms", value / 1e6);
  } else if (ns >= 1'000) {
    std::snprintf(text, sizeof text, "%.1f us", value / 1e3);
  } else {
    std::snprintf(text, sizeof text, "%" PRId64 " ns", ns);
  }
  return text;
}

}  // namespace apptracer::diagnose
