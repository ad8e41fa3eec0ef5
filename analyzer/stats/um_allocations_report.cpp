// Per managed allocation (and any other allocation unified-memory records
// or hints name: pageable memory migrates too where the GPU can fault on
// it, HMM/ATS): the hints the program gave (cudaMemAdvise, stream
// attachment) and whether they came before its first touch, which is when
// they can still decide where pages go; then what the driver did with it:
// bytes migrated each way (prefetch_bytes: the part of them attributed to a
// cudaMemPrefetchAsync, see um_attribution.h; the driver's own prefetching
// around faults is counted with the faulting kernel), GPU page-fault groups, CPU page
// faults, bytes mapped remotely instead of migrated, and thrashing reports.
// CUPTI loses unified-memory records under load without saying so
// (docs/tracing.md, "What is recorded"): the numbers are lower bounds.
//
// Records in no known allocation (`__managed__` variables, memory the tracer
// did not see allocated, an alloc_id the trace lacks) are summed into one
// last row, "unknown managed region", with the address range they span
// ("0xLOW-0xHIGH", HIGH exclusive): never dropped.
#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "apptracer/enums.h"
#include "analyzer/stats/stats_reports.h"
#include "analyzer/stats/sums.h"

namespace apptracer {

namespace {

// std::nullopt: the unknown managed region.
using Region = std::optional<int64_t>;

struct Counters {
  int64_t htod = 0, dtoh = 0, dtod = 0, prefetched = 0;
  int64_t gpu_fault_groups = 0, cpu_faults = 0, remote_map_bytes = 0, thrashing = 0;

  void add(const trace::UmEvent& event, const trace::UmCause& cause) {
    switch (event.kind) {
      case UmCounterKind::BytesHtoD: htod = saturating_add(htod, event.bytes); break;
      case UmCounterKind::BytesDtoH: dtoh = saturating_add(dtoh, event.bytes); break;
      case UmCounterKind::BytesDtoD: dtod = saturating_add(dtod, event.bytes); break;
      case UmCounterKind::GpuPageFault: ++gpu_fault_groups; break;
      case UmCounterKind::CpuPageFault: ++cpu_faults; break;
      case UmCounterKind::RemoteMap: remote_map_bytes = saturating_add(remote_map_bytes, event.bytes); break;
      case UmCounterKind::Thrashing: ++thrashing; break;
      default: break;
    }
    if (event.is_migration() && cause.kind == trace::UmCauseKind::Prefetch) prefetched = saturating_add(prefetched, event.bytes);
  }
};

struct RegionUse {
  Counters counters;
  std::optional<int64_t> first_touch_ns;
  int64_t low = INT64_MAX, high = INT64_MIN;  // address range of its records

  void touch(int64_t ns) { first_touch_ns = std::min(first_touch_ns.value_or(ns), ns); }
};

std::string hex(int64_t address) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%" PRIx64, static_cast<uint64_t>(address));
  return text;
}

std::string location_text(std::optional<MemLocationType> type, trace::NullableInt id) {
  switch (type.value_or(MemLocationType{})) {
    case MemLocationType::Device: return "device " + std::to_string(id.value_or(0));
    case MemLocationType::Host: return "host";
    case MemLocationType::HostNuma: return "host NUMA node " + std::to_string(id.value_or(0));
    case MemLocationType::HostNumaCurrent: return "host NUMA node of the caller";
    default: return "";
  }
}

// The allocations the report lists: every managed one, and any other that
// unified-memory records or hints name.
struct Listed {
  int64_t id;
  std::string kind;
  int64_t address;
  int64_t bytes;
  std::optional<int64_t> device;
};

std::vector<Listed> listed_allocations(trace::Trace& trace) {
  std::unordered_set<int64_t> named;
  for (const auto& event : trace.rows<UmEventRow>()) {
    if (event.alloc_id) named.insert(*event.alloc_id);
  }
  for (const auto& advice : trace.rows<MemAdviceRow>()) {
    if (advice.alloc_id) named.insert(*advice.alloc_id);
  }
  std::vector<Listed> listed;
  for (const trace::Allocation& alloc : trace.operations().allocations()) {
    const auto& allocation = alloc.row();
    if (allocation.kind != AllocKind::Managed && !named.count(allocation.id)) continue;
    listed.push_back({allocation.id, std::string(to_string(allocation.kind)), allocation.address,
                      allocation.bytes, allocation.device.optional()});
  }
  return listed;
}

// Where a row's alloc_id puts it: its allocation, or the unknown region when
// it names none (or one the trace does not have).
class Regions {
 public:
  explicit Regions(const std::vector<Listed>& listed) {
    for (const Listed& allocation : listed) ids_.insert(allocation.id);
  }
  Region of(std::optional<int64_t> alloc_id) const {
    return alloc_id && ids_.count(*alloc_id) ? alloc_id : std::nullopt;
  }

 private:
  std::unordered_set<int64_t> ids_;
};

// Kernels that used an allocation (an argument pointing into it) and
// prefetches of it touch it too, even where no record says so.
void add_touches_from_work(trace::Trace& trace, const Regions& regions,
                           std::map<Region, RegionUse>& uses) {
  for_each_managed_argument(trace, [&](const trace::Kernel& launch, int64_t alloc_id) {
    const auto& kernel = *launch.row;
    Region region = regions.of(alloc_id);
    trace::NullableInt start = kernel.gpu_start_ns ? kernel.gpu_start_ns : kernel.api_start_ns;
    if (region && start) uses[region].touch(*start);
  });
  for (const trace::Transfer& transfer : trace.operations().copies()) {
    const auto& copy = *transfer.copy_row();
    if (copy.kind != CopyKind::Prefetch) continue;
    Region region = regions.of(copy.dst_alloc_id ? copy.dst_alloc_id : copy.src_alloc_id);
    if (region && copy.api_start_ns) uses[region].touch(*copy.api_start_ns);
  }
}

// "set preferred location device 0 (before first touch); set read mostly (after first touch)"
std::map<Region, std::string> advice_texts(trace::Trace& trace, const Regions& regions,
                                           const std::map<Region, RegionUse>& uses) {
  std::vector<const trace::Packed<MemAdviceRow>*> in_time_order;
  for (const auto& advice : trace.rows<MemAdviceRow>()) in_time_order.push_back(&advice);
  std::stable_sort(in_time_order.begin(), in_time_order.end(),
                   [](const auto* a, const auto* b) { return a->ns < b->ns; });
  std::map<Region, std::string> texts;
  for (const trace::Packed<MemAdviceRow>* given : in_time_order) {
    Region region = regions.of(given->alloc_id);
    MemAdvice advice = given->advice;
    std::string text(to_string(advice));
    if (advice == MemAdvice::SetPreferredLocation || advice == MemAdvice::SetAccessedBy ||
        advice == MemAdvice::UnsetAccessedBy) {
      std::string where = location_text(given->location_type, given->location_id);
      if (!where.empty()) text += " " + where;
    }
    auto use = uses.find(region);
    bool before = use == uses.end() || !use->second.first_touch_ns ||
                  given->ns < *use->second.first_touch_ns;
    text += before ? " (before first touch)" : " (after first touch)";
    std::string& all = texts[region];
    all += (all.empty() ? "" : "; ") + text;
  }
  return texts;
}

void append_counters(std::vector<Cell>& row, const Counters& counters) {
  for (int64_t value : {counters.htod, counters.dtoh, counters.dtod, counters.prefetched,
                        counters.gpu_fault_groups, counters.cpu_faults, counters.remote_map_bytes,
                        counters.thrashing}) {
    row.emplace_back(value);
  }
}

}  // namespace

Table um_allocations_report(trace::Trace& trace, const trace::UmTrace& um) {
  std::vector<Listed> listed = listed_allocations(trace);
  Regions regions(listed);
  std::map<Region, RegionUse> uses;
  for (size_t i = 0; i < um.events.size(); ++i) {
    const trace::UmEvent& event = um.events[i];
    RegionUse& use = uses[regions.of(event.alloc_id)];
    use.counters.add(event, um.causes[i]);
    use.touch(event.start_ns);
    use.low = std::min(use.low, event.address);
    use.high = std::max(use.high, saturating_add(event.address, std::max<int64_t>(event.bytes, 1)));
  }
  add_touches_from_work(trace, regions, uses);
  std::map<Region, std::string> advice = advice_texts(trace, regions, uses);

  Table table{"um_allocations",
              {"allocation", "kind", "address", "bytes", "device", "advice", "htod_bytes",
               "dtoh_bytes", "dtod_bytes", "prefetch_bytes", "gpu_fault_groups", "cpu_faults",
               "remote_map_bytes", "thrashing"},
              {}};
  for (const Listed& allocation : listed) {
    std::vector<Cell> row{allocation.id, allocation.kind, hex(allocation.address),
                          allocation.bytes, optional_cell(allocation.device),
                          advice[allocation.id]};
    append_counters(row, uses[allocation.id].counters);
    table.rows.push_back(std::move(row));
  }
  auto unknown = uses.find(std::nullopt);
  bool unknown_advice = advice.count(std::nullopt) > 0;
  if (unknown != uses.end() || unknown_advice) {
    RegionUse use = unknown != uses.end() ? unknown->second : RegionUse{};
    std::vector<Cell> row{std::string("unknown managed region"), Cell()};
    if (use.low <= use.high) {
      row.emplace_back(hex(use.low) + "-" + hex(use.high));
      row.emplace_back(saturating_sub(use.high, use.low));
    } else {
      row.resize(4);
    }
    row.emplace_back();
    row.emplace_back(advice[std::nullopt]);
    append_counters(row, use.counters);
    table.rows.push_back(std::move(row));
  }
  return table;
}

}  // namespace apptracer
