// The median of measured rounds, shared by the link and launch measurements
// and the models read from them.
#pragma once

#include <algorithm>
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

}  // namespace apptracer::model
