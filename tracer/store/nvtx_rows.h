// NVTX records -> nvtx_ranges rows: a push is paired with the next pop on its
// thread in its domain (its depth is how many were open there), a start with
// the end of the same range id on any thread; a mark is a row of its own.
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

#include "apptracer/records.h"
#include "apptracer/row_inserter.h"

namespace apptracer {

class NvtxRows {
 public:
  // The row this record completes, if any.
  std::optional<NvtxRangeRow> add(const Record& r);
  // Ranges still open (end_ns NULL), emptying what is held.
  std::vector<NvtxRangeRow> take_open();

 private:
  std::unordered_map<uint64_t, std::vector<NvtxRangeRow>> stacks_;  // by thread and domain
  std::unordered_map<uint64_t, NvtxRangeRow> started_;               // by range id
};

}  // namespace apptracer
