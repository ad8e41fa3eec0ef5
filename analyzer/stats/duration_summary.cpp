#include "analyzer/stats/duration_summary.h"
#include "analyzer/stats/sums.h"

#include <algorithm>

namespace apptracer {

DurationSummary summarize_durations(std::vector<int64_t> durations) {
  DurationSummary summary;
  summary.count = static_cast<int64_t>(durations.size());
  if (durations.empty()) return summary;
  std::sort(durations.begin(), durations.end());
  __int128 total = 0;
  for (int64_t duration : durations) total += duration;
  summary.total = clamp_to_int64(total);
  summary.min = durations.front();
  summary.max = durations.back();
  size_t middle = durations.size() / 2;
  summary.median = durations.size() % 2 == 1
                       ? static_cast<double>(durations[middle])
                       : (static_cast<double>(durations[middle - 1]) + static_cast<double>(durations[middle])) / 2.0;
  return summary;
}

void append_duration_cells(std::vector<Cell>& row, const DurationSummary& summary) {
  row.emplace_back(summary.total);
  if (summary.count == 0) {
    row.resize(row.size() + 3);
    return;
  }
  row.emplace_back(summary.min);
  row.emplace_back(summary.median);
  row.emplace_back(summary.max);
}

}  // namespace apptracer
