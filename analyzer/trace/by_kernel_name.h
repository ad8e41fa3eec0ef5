// Totals per kernel name over a trace's kernels, ordered by name as a
// std::map keyed by the name would be, without comparing names per kernel:
// a training trace's million kernels carry a few hundred names, each a
// template signature often hundreds of bytes long and sharing long
// prefixes, and each stored once in the trace's text. A name is looked up
// by where it is stored first; the map is searched by its text only the
// first time a stored name is seen.
#pragma once

#include <cstddef>
#include <map>
#include <string_view>
#include <unordered_map>
#include <utility>

namespace apptracer::trace {

template <typename Total>
class ByKernelName {
 public:
  // The total for `name`, which must stay where it is while this lives (the
  // trace's text does).
  Total& operator[](std::string_view name) {
    auto [seen, added] = by_storage_.try_emplace(name.data(), name.size(), nullptr);
    if (added || seen->second.first != name.size()) {
      seen->second = {name.size(), &by_name_[name]};  // a map's elements stay put
    }
    return *seen->second.second;
  }

  auto begin() { return by_name_.begin(); }
  auto end() { return by_name_.end(); }
  auto begin() const { return by_name_.begin(); }
  auto end() const { return by_name_.end(); }
  size_t size() const { return by_name_.size(); }

 private:
  std::map<std::string_view, Total> by_name_;
  std::unordered_map<const char*, std::pair<size_t, Total*>> by_storage_;
};

}  // namespace apptracer::trace
