#include "analyzer/trace/memory_series.h"

#include <algorithm>
#include <map>
#include <optional>
#include <tuple>

#include "apptracer/saturating.h"

namespace apptracer {

namespace {

using trace::Packed;

// Changes of one series: (time, change in bytes).
using Changes = std::vector<std::pair<int64_t, __int128>>;
using Key = std::pair<trace::ProcessId, std::string>;

void add_lifetime(Changes& changes, int64_t bytes, int64_t alloc_ns, std::optional<int64_t> free_ns) {
  changes.emplace_back(alloc_ns, bytes);
  if (free_ns) changes.emplace_back(*free_ns, -static_cast<__int128>(bytes));
}

// The running sum, a point per time. At equal times frees come first, so
// memory freed and reallocated in one instant is never counted twice.
std::vector<std::pair<int64_t, int64_t>> running_sum(Changes changes) {
  std::sort(changes.begin(), changes.end());
  std::vector<std::pair<int64_t, int64_t>> points;
  __int128 sum = 0;
  for (const auto& [ns, change] : changes) {
    sum += change;
    int64_t value = clamp_to_int64(sum);
    if (!points.empty() && points.back().first == ns) {
      points.back().second = value;
    } else {
      points.emplace_back(ns, value);
    }
  }
  return points;
}

std::string gpu_name(trace::NullableInt device) {
  return "GPU " + (device ? std::to_string(*device) : std::string("?"));
}

std::optional<std::string> migration_name(UmCounterKind kind) {
  switch (kind) {
    case UmCounterKind::BytesHtoD: return "UM migrated HtoD";
    case UmCounterKind::BytesDtoH: return "UM migrated DtoH";
    case UmCounterKind::BytesDtoD: return "UM migrated DtoD";
    default: return std::nullopt;
  }
}

}  // namespace

bool holds_own_memory(AllocKind kind) {
  return kind != AllocKind::VmmReserve && kind != AllocKind::VmmMapping &&
         kind != AllocKind::RegisteredHost;
}

std::vector<MemorySeries> read_memory_series(trace::Trace& trace) {
  std::map<Key, Changes> changes;
  // A device's series, found by (process, device, which) without making its
  // name: a training trace has millions of blocks and a few series.
  enum Which { Allocated, FrameworkBlocks };
  std::map<std::tuple<trace::ProcessId, trace::NullableInt, Which>, Changes*> of_device;
  auto series_of = [&](trace::ProcessId process, trace::NullableInt device, Which which) -> Changes& {
    auto [found, added] = of_device.try_emplace({process, device, which}, nullptr);
    if (added) {
      std::string name = gpu_name(device) + (which == Allocated ? " memory allocated" : " memory in framework blocks");
      found->second = &changes[{process, std::move(name)}];
    }
    return *found->second;
  };
  trace.stream<AllocationRow>("WHERE device IS NOT NULL", [&](const Packed<AllocationRow>& row) {
    if (!holds_own_memory(row.kind)) return;
    add_lifetime(series_of(row.process, row.device, Allocated), row.bytes, row.alloc_ns, row.free_ns);
  });
  trace.stream<SubAllocationRow>("", [&](const Packed<SubAllocationRow>& row) {
    add_lifetime(series_of(row.process, row.device, FrameworkBlocks), row.bytes, row.alloc_ns, row.free_ns);
  });
  // Bytes migrated so far: each migration counts when it ends.
  trace.stream<UmEventRow>("", [&](const Packed<UmEventRow>& row) {
    std::optional<std::string> name = migration_name(row.counter_kind);
    trace::NullableInt at = row.end_ns ? row.end_ns : row.start_ns;
    if (!name || !at || !row.bytes) return;
    changes[{row.process, *name}].emplace_back(*at, *row.bytes);
  });
  std::vector<MemorySeries> series;
  for (auto& [key, list] : changes)
    series.push_back({key.first, key.second, running_sum(std::move(list))});
  return series;
}

}  // namespace apptracer
