// Totals of operations that move bytes (copies, memsets): how many, how many
// bytes, how long on the GPU, and the bandwidth that achieved.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "analyzer/table/table.h"

namespace apptracer {

struct TransferTotals {
  int64_t count = 0;
  int64_t bytes = 0;
  int64_t timed_bytes = 0;  // bytes of the operations that have GPU times
  int64_t time_ns = 0;
  int64_t untimed = 0;      // operations whose GPU activity record was lost

  void add(int64_t operation_bytes, std::optional<int64_t> duration_ns);
};

// Appends count, bytes, time_ns, bandwidth_gbps (NULL without GPU time), untimed.
void append_transfer_cells(std::vector<Cell>& row, const TransferTotals& totals);

inline const char* const kTransferColumns[] = {"count", "bytes", "time_ns", "bandwidth_gbps",
                                               "untimed"};

}  // namespace apptracer
