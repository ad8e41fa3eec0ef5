#include "analyzer/report/bandwidth_against_peak.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <utility>
#include <vector>

namespace apptracer::report {

namespace {

std::string gbps_text(double gbps) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f GB/s", gbps);
  return text;
}

}  // namespace

std::optional<double> peak_gbps(const diagnose::TransferCost& cost, const diagnose::TransferPath& path) {
  constexpr int64_t kLarge = int64_t{1} << 30;
  std::optional<double> t = cost.time_ns(path, kLarge);
  if (!t || *t <= 0) return std::nullopt;
  return static_cast<double>(kLarge) / *t;
}

std::string above_peak_reason(const diagnose::TransferCost& cost, const diagnose::TransferPath& path,
                              double achieved_gbps, std::optional<double> peak) {
  if (!peak || achieved_gbps <= *peak * 1.01) return {};
  std::string over = "above the path's peak of " + gbps_text(*peak) + ": ";
  bool host_side = path.kind == CopyKind::HtoD || path.kind == CopyKind::DtoH;
  if (host_side && path.host_memory == MemoryKind::Pageable) {
    return over +
           "a pageable copy is staged through the driver's pinned buffer and the GPU times only the DMA "
           "out of (or into) that buffer; the CPU's copy of the bytes, in the call, is not in that time. "
           "The peak is the whole copy's rate (" + cost.describe(path) + ")";
  }
  return over + "the GPU timed these bytes faster than the link model's numbers for the path (" +
         cost.describe(path) +
         "): a nominal or quickly measured peak; `apptracer links -o FILE` on this machine measures it";
}

Table copy_bandwidth(const diagnose::TraceFacts& facts) {
  Table table{"memory_bandwidth",
              {"kind", "count", "bytes", "gpu_ns", "mean_gbps", "p95_gbps_over_busy_time"},
              {}};
  struct Kind {
    int64_t count = 0, bytes = 0, ns = 0;
    std::vector<std::pair<double, int64_t>> rates;  // GB/s, GPU ns
  };
  std::map<std::string, Kind> kinds;
  for (const diagnose::Transfer& t : facts.ops().copies()) {
    if (!t.timed()) continue;
    Kind& kind = kinds[std::string(to_string(t.kind()))];
    ++kind.count;
    kind.bytes = saturating_add(kind.bytes, t.bytes());
    kind.ns = saturating_add(kind.ns, t.gpu_ns());
    if (t.gpu_ns() > 0) kind.rates.emplace_back(static_cast<double>(t.bytes()) / t.gpu_ns(), t.gpu_ns());
  }
  for (auto& [name, kind] : kinds) {
    std::sort(kind.rates.begin(), kind.rates.end());
    Cell quantile;
    double reached = 0, needed = kBusyTimeQuantile * static_cast<double>(kind.ns);
    for (const auto& [rate, ns] : kind.rates) {
      reached += static_cast<double>(ns);
      quantile = rate;
      if (reached >= needed) break;
    }
    table.rows.push_back({name, kind.count, kind.bytes, kind.ns,
                          kind.ns > 0 ? static_cast<double>(kind.bytes) / kind.ns : 0.0, quantile});
  }
  return table;
}

}  // namespace apptracer::report
