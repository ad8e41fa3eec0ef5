// What `report --compare` shows: the rows of `apptracer diff`'s tables that
// changed. A row "changed" by diff (any difference at all) whose measures
// each moved by less than kChangeThreshold of the larger side, or a time by
// less than kTimeFloorNs, is run-to-run noise: left out and counted.
#pragma once

#include <cstdint>
#include <vector>

#include "analyzer/table/table.h"

namespace apptracer::report {

inline constexpr double kChangeThreshold = 0.05;
inline constexpr int64_t kTimeFloorNs = 1000;

// Whether `row` of a diff table (columns category, name, change, then
// M_a, M_b, M_diff per measure) appeared, disappeared, changed path, or
// moved one of its measures beyond the threshold.
bool changed_beyond_threshold(const Table& table, const std::vector<Cell>& row);

}  // namespace apptracer::report
