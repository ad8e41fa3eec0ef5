// Framework range records -> framework_ranges rows: a push is paired with
// the next pop of the same kind on its thread; its depth is how many of that
// kind were open there.
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

#include "apptracer/records.h"
#include "apptracer/row_inserter.h"

namespace apptracer {

class FrameworkRangeRows {
 public:
  // The row this record completes, if any.
  std::optional<FrameworkRangeRow> add(const Record& r);
  // Ranges still open (end_ns NULL), emptying what is held.
  std::vector<FrameworkRangeRow> take_open();

 private:
  std::unordered_map<uint64_t, std::vector<FrameworkRangeRow>> stacks_;  // by thread and kind
};

}  // namespace apptracer
