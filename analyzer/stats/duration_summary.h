// Count, total, min, median and max of a set of durations: the columns most
// stats reports share.
#pragma once

#include <cstdint>
#include <vector>

#include "analyzer/table/table.h"

namespace apptracer {

struct DurationSummary {
  int64_t count = 0;
  int64_t total = 0;
  int64_t min = 0;
  int64_t max = 0;
  double median = 0;  // mean of the two middle values when the count is even
};

DurationSummary summarize_durations(std::vector<int64_t> durations);

// Appends total, min, median, max; min/median/max are NULL without durations.
void append_duration_cells(std::vector<Cell>& row, const DurationSummary& summary);

// Column names matching append_duration_cells.
inline const char* const kDurationColumns[] = {"total_ns", "min_ns", "median_ns", "max_ns"};

}  // namespace apptracer
