#include "analyzer/trace/intervals.h"

#include <algorithm>
#include <iterator>

#include "apptracer/saturating.h"

namespace apptracer::trace {

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
  // Merged intervals are sorted and apart: the first that ends after `from`
  // is found, not scanned for (a long run has millions; rules ask thousands
  // of times).
  auto first = std::upper_bound(merged.begin(), merged.end(), from,
                                [](int64_t at, const std::pair<int64_t, int64_t>& interval) {
                                  return at < interval.second;
                                });
  int64_t total = 0;
  for (auto it = first; it != merged.end() && it->first < to; ++it)
    total = saturating_add(total, elapsed_ns(std::max(it->first, from), std::min(it->second, to)));
  return total;
}

bool one_holds(const Intervals& apart, int64_t start, int64_t end) {
  auto after = std::upper_bound(apart.begin(), apart.end(), start,
                                [](int64_t ns, const std::pair<int64_t, int64_t>& i) { return ns < i.first; });
  return after != apart.begin() && std::prev(after)->second >= end;
}

}  // namespace apptracer::trace
