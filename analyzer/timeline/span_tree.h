// The span (earliest start, latest end) of any run of consecutive items of a
// fixed list, in O(log n) per run: a segment tree over the items' spans. For
// many overlapping runs (nested NVTX ranges over the same calls), where
// walking each run's items costs its length times the nesting depth.
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

namespace apptracer {

class SpanTree {
 public:
  using Span = std::pair<int64_t, int64_t>;  // start, end
  static constexpr Span kNone{INT64_MAX, INT64_MIN};

  explicit SpanTree(const std::vector<Span>& items) : size_(items.size()), nodes_(2 * items.size(), kNone) {
    std::copy(items.begin(), items.end(), nodes_.begin() + static_cast<std::ptrdiff_t>(size_));
    for (size_t i = size_; i-- > 1;) nodes_[i] = joined(nodes_[2 * i], nodes_[2 * i + 1]);
  }

  // The span of items [from, to); kNone when the run is empty.
  Span span(size_t from, size_t to) const {
    Span result = kNone;
    for (from += size_, to += size_; from < to; from /= 2, to /= 2) {
      if (from % 2 == 1) result = joined(result, nodes_[from++]);
      if (to % 2 == 1) result = joined(result, nodes_[--to]);
    }
    return result;
  }

 private:
  static Span joined(const Span& a, const Span& b) {
    return {std::min(a.first, b.first), std::max(a.second, b.second)};
  }

  size_t size_;
  std::vector<Span> nodes_;
};

}  // namespace apptracer
