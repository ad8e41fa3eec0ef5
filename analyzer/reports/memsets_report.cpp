// Memsets grouped by the kind of memory they filled.
#include <map>

#include "apptracer/enums.h"
#include "stats_reports.h"
#include "transfer_totals.h"

namespace apptracer {

Table memsets_report(Database& db) {
  std::map<int64_t, TransferTotals> groups;
  Statement rows = db.prepare("SELECT memory, bytes, gpu_end_ns - gpu_start_ns FROM memsets");
  while (rows.step()) groups[rows.int64(0)].add(rows.int64(1), rows.optional_int64(2));
  Table table{"memsets", {"memory"}, {}};
  table.columns.insert(table.columns.end(), std::begin(kTransferColumns), std::end(kTransferColumns));
  for (const auto& [memory, totals] : groups) {
    std::vector<Cell> row{std::string(to_string(static_cast<MemoryKind>(memory)))};
    append_transfer_cells(row, totals);
    table.rows.push_back(std::move(row));
  }
  return table;
}

}  // namespace apptracer
