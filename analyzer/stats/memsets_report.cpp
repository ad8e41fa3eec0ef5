// Memsets grouped by the kind of memory they filled.
#include <map>

#include "apptracer/enums.h"
#include "analyzer/stats/stats_reports.h"
#include "analyzer/stats/sums.h"
#include "analyzer/stats/transfer_totals.h"

namespace apptracer {

Table memsets_report(trace::Trace& trace) {
  std::map<MemoryKind, TransferTotals> groups;
  for (const trace::Transfer& transfer : trace.operations().memsets()) {
    const auto& memset = *transfer.memset_row();
    groups[memset.memory].add(memset.bytes, recorded_ns(memset.gpu_start_ns, memset.gpu_end_ns));
  }
  Table table{"memsets", {"memory"}, {}};
  table.columns.insert(table.columns.end(), std::begin(kTransferColumns), std::end(kTransferColumns));
  for (const auto& [memory, totals] : groups) {
    std::vector<Cell> row{std::string(to_string(memory))};
    append_transfer_cells(row, totals);
    table.rows.push_back(std::move(row));
  }
  return table;
}

}  // namespace apptracer
