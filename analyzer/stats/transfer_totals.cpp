#include "analyzer/stats/transfer_totals.h"
#include "analyzer/stats/sums.h"

namespace apptracer {

void TransferTotals::add(int64_t operation_bytes, std::optional<int64_t> duration_ns) {
  ++count;
  bytes = saturating_add(bytes, operation_bytes);
  if (duration_ns) {
    timed_bytes = saturating_add(timed_bytes, operation_bytes);
    time_ns = saturating_add(time_ns, *duration_ns);
  } else {
    ++untimed;
  }
}

void append_transfer_cells(std::vector<Cell>& row, const TransferTotals& totals) {
  row.emplace_back(totals.count);
  row.emplace_back(totals.bytes);
  row.emplace_back(totals.time_ns);
  // Only operations with a GPU time contribute, so lost records don't inflate it.
  if (totals.time_ns > 0) {
    row.emplace_back(static_cast<double>(totals.timed_bytes) / static_cast<double>(totals.time_ns));
  } else {
    row.emplace_back(std::monostate{});
  }
  row.emplace_back(totals.untimed);
}

}  // namespace apptracer
