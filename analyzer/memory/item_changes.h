// Memory items' allocations and ends in time order, held as two orders of
// the items' indexes (4 bytes a change) rather than a record a change (16 to
// 32 bytes): a training trace has millions of tensor blocks.
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

namespace apptracer::memory {

// StartNs and EndNs: an item's index -> its allocation time, its end time
// (asked only of the items in `ends`).
template <typename StartNs, typename EndNs>
class ItemChanges {
 public:
  ItemChanges(std::vector<uint32_t> starts, std::vector<uint32_t> ends, StartNs start_ns, EndNs end_ns)
      : starts_(std::move(starts)), ends_(std::move(ends)), start_ns_(start_ns), end_ns_(end_ns) {
    std::sort(starts_.begin(), starts_.end(), [&](uint32_t a, uint32_t b) { return start_ns_(a) < start_ns_(b); });
    std::sort(ends_.begin(), ends_.end(), [&](uint32_t a, uint32_t b) { return end_ns_(a) < end_ns_(b); });
  }

  bool empty() const { return starts_.empty() && ends_.empty(); }
  // The first and the last change's time (not empty()).
  int64_t first_ns() const {
    return std::min(starts_.empty() ? INT64_MAX : start_ns_(starts_.front()),
                    ends_.empty() ? INT64_MAX : end_ns_(ends_.front()));
  }
  int64_t last_ns() const {
    return std::max(starts_.empty() ? INT64_MIN : start_ns_(starts_.back()),
                    ends_.empty() ? INT64_MIN : end_ns_(ends_.back()));
  }

  // In time order: change(item, +1) for an allocation, change(item, -1) for
  // an end; then moment(ns) once every change at ns is given, which returns
  // false to stop.
  template <typename Change, typename Moment>
  void walk(Change change, Moment moment) const {
    size_t s = 0, e = 0;
    while (s < starts_.size() || e < ends_.size()) {
      int64_t ns = std::min(s < starts_.size() ? start_ns_(starts_[s]) : INT64_MAX,
                            e < ends_.size() ? end_ns_(ends_[e]) : INT64_MAX);
      for (; e < ends_.size() && end_ns_(ends_[e]) == ns; ++e) change(ends_[e], -1);
      for (; s < starts_.size() && start_ns_(starts_[s]) == ns; ++s) change(starts_[s], 1);
      if (!moment(ns)) return;
    }
  }

 private:
  std::vector<uint32_t> starts_, ends_;
  StartNs start_ns_;
  EndNs end_ns_;
};

template <typename StartNs, typename EndNs>
ItemChanges(std::vector<uint32_t>, std::vector<uint32_t>, StartNs, EndNs) -> ItemChanges<StartNs, EndNs>;

}  // namespace apptracer::memory
