// Allocations by place (each GPU, and host memory) and kind: how many, how many
// bytes in all, the most bytes live at once, and the bytes never freed.
//
// Each place also gets an "all" row whose peak is over every kind that holds
// memory of its own (holds_own_memory), so one byte is never counted twice.
#include <algorithm>
#include <map>
#include <optional>
#include <utility>

#include "apptracer/enums.h"
#include "analyzer/trace/memory_series.h"
#include "analyzer/stats/stats_reports.h"
#include "analyzer/stats/sums.h"

namespace apptracer {

namespace {

struct Lifetime {
  int64_t bytes;
  int64_t alloc_ns;
  std::optional<int64_t> free_ns;
};

struct KindTotals {
  int64_t count = 0;
  int64_t bytes = 0;
  int64_t live_at_end = 0;
  std::vector<Lifetime> lifetimes;
};

// The largest sum of bytes live at one time. At equal timestamps frees come
// first: memory freed and reallocated in the same instant was never held twice.
int64_t peak_live_bytes(const std::vector<Lifetime>& lifetimes) {
  std::vector<std::pair<int64_t, __int128>> changes;  // (time, +bytes or -bytes)
  for (const Lifetime& lifetime : lifetimes) {
    changes.emplace_back(lifetime.alloc_ns, lifetime.bytes);
    if (lifetime.free_ns) changes.emplace_back(*lifetime.free_ns, -static_cast<__int128>(lifetime.bytes));
  }
  std::sort(changes.begin(), changes.end());
  __int128 live = 0;
  __int128 peak = 0;
  for (const auto& change : changes) {
    live += change.second;
    peak = std::max(peak, live);
  }
  return clamp_to_int64(peak);
}

std::string place_name(std::optional<int64_t> device) {
  return device ? "device " + std::to_string(*device) : "host";
}

}  // namespace

Table allocations_report(trace::Trace& trace) {
  // Keyed by (device or none, kind): std::nullopt sorts first, so host comes
  // before the devices.
  std::map<std::optional<int64_t>, std::map<AllocKind, KindTotals>> places;
  for (const trace::Allocation& alloc : trace.operations().allocations()) {
    const auto& allocation = alloc.row();
    KindTotals& totals = places[allocation.device.optional()][allocation.kind];
    Lifetime lifetime{allocation.bytes, allocation.alloc_ns, allocation.free_ns.optional()};
    ++totals.count;
    totals.bytes = saturating_add(totals.bytes, lifetime.bytes);
    if (!lifetime.free_ns) totals.live_at_end = saturating_add(totals.live_at_end, lifetime.bytes);
    totals.lifetimes.push_back(lifetime);
  }

  Table table{"allocations",
              {"place", "kind", "count", "bytes", "peak_live_bytes", "live_at_end_bytes"},
              {}};
  for (const auto& [device, kinds] : places) {
    KindTotals all;
    for (const auto& [kind, totals] : kinds) {
      table.rows.push_back({place_name(device), std::string(to_string(kind)),
                            totals.count, totals.bytes, peak_live_bytes(totals.lifetimes),
                            totals.live_at_end});
      if (!holds_own_memory(kind)) continue;
      all.count += totals.count;
      all.bytes = saturating_add(all.bytes, totals.bytes);
      all.live_at_end = saturating_add(all.live_at_end, totals.live_at_end);
      all.lifetimes.insert(all.lifetimes.end(), totals.lifetimes.begin(), totals.lifetimes.end());
    }
    table.rows.push_back({place_name(device), std::string("all"), all.count, all.bytes,
                          peak_live_bytes(all.lifetimes), all.live_at_end});
  }
  return table;
}

}  // namespace apptracer
