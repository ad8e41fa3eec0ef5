// The median of measured rounds, shared by the link and launch measurements
// and the models read from them; and the middle of recorded durations (a
// step's, a call's), shared by the analyses that take one as typical.
#pragma once

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <vector>

namespace apptracer::model {

// The middle value; the mean of the two middle ones for an even count.
inline double median(std::vector<double> values) {
  if (values.empty()) throw std::invalid_argument("a median of no measurements");
  std::sort(values.begin(), values.end());
  size_t half = values.size() / 2;
  return values.size() % 2 ? values[half] : (values[half - 1] + values[half]) / 2;
}

// The upper middle value, one of `values` (a recorded duration, not a mean
// of two), found without sorting them all; `fallback` where there is none.
inline int64_t middle_value(std::vector<int64_t> values, int64_t fallback = 0) {
  if (values.empty()) return fallback;
  auto middle = values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2);
  std::nth_element(values.begin(), middle, values.end());
  return *middle;
}

}  // namespace apptracer::model
