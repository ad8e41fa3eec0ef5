// Time intervals [start, end) on the trace clock: GPU busy time, a
// thread's calls or ranges. Merged, they are sorted and apart, so what
// covers a moment is found by a binary search.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace apptracer::trace {

using Intervals = std::vector<std::pair<int64_t, int64_t>>;

// Sorts and merges overlapping intervals in place.
void merge_intervals(Intervals& intervals);
// Total length of merged intervals inside [from, to].
int64_t covered_ns(const Intervals& merged, int64_t from, int64_t to);
// Whether one of sorted intervals that do not overlap (merged ones, or a
// thread's calls, which do not nest) holds all of [start, end]: only the
// latest to start before `start` can.
bool one_holds(const Intervals& apart, int64_t start, int64_t end);

}  // namespace apptracer::trace
