// Copies grouped by direction and by the memory kinds of both ends (pageable
// vs pinned host memory is what decides a host copy's speed).
#include <map>
#include <tuple>

#include "apptracer/enums.h"
#include "stats_reports.h"
#include "transfer_totals.h"

namespace apptracer {

Table copies_report(Database& db) {
  std::map<std::tuple<int64_t, int64_t, int64_t>, TransferTotals> groups;
  Statement rows = db.prepare(
      "SELECT kind, src_memory, dst_memory, bytes, gpu_end_ns - gpu_start_ns FROM memcpys");
  while (rows.step()) {
    groups[{rows.int64(0), rows.int64(1), rows.int64(2)}].add(rows.int64(3),
                                                             rows.optional_int64(4));
  }
  Table table{"copies", {"kind", "src_memory", "dst_memory"}, {}};
  table.columns.insert(table.columns.end(), std::begin(kTransferColumns), std::end(kTransferColumns));
  for (const auto& [key, totals] : groups) {
    auto [kind, src, dst] = key;
    std::vector<Cell> row{std::string(to_string(static_cast<CopyKind>(kind))),
                          std::string(to_string(static_cast<MemoryKind>(src))),
                          std::string(to_string(static_cast<MemoryKind>(dst)))};
    append_transfer_cells(row, totals);
    table.rows.push_back(std::move(row));
  }
  return table;
}

}  // namespace apptracer
