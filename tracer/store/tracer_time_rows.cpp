#include "store/tracer_time_rows.h"

namespace apptracer {

void TracerTimeRows::restart(uint64_t start_ns) {
  start_ns_ = start_ns;
  for (size_t i = 0; i < self_cost::kSiteCount; ++i) {
    calls_[i] = self_cost::totals[i].calls.load(std::memory_order_relaxed);
    ns_[i] = self_cost::totals[i].ns.load(std::memory_order_relaxed);
  }
}

std::vector<TracerTimeRow> TracerTimeRows::take(uint64_t now_ns, bool last) {
  std::vector<TracerTimeRow> rows;
  if (now_ns < start_ns_ || (!last && now_ns - start_ns_ < kStretchNs)) return rows;
  for (size_t i = 0; i < self_cost::kSiteCount; ++i) {
    uint64_t calls = self_cost::totals[i].calls.load(std::memory_order_relaxed);
    uint64_t ns = self_cost::totals[i].ns.load(std::memory_order_relaxed);
    if (calls > calls_[i]) {
      TracerTimeRow row;
      row.start_ns = static_cast<int64_t>(start_ns_);
      row.end_ns = static_cast<int64_t>(now_ns);
      row.site = static_cast<TracerSite>(i + 1);
      row.timed_calls = static_cast<int64_t>(calls - calls_[i]);
      row.timed_ns = static_cast<int64_t>(ns - ns_[i]);
      row.sample_every = self_cost::sample_every();
      rows.push_back(row);
    }
    calls_[i] = calls;
    ns_[i] = ns;
  }
  start_ns_ = now_ns;
  return rows;
}

}  // namespace apptracer
