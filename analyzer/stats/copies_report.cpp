// Copies grouped by direction and by the memory kinds of both ends (pageable
// vs pinned host memory is what decides a host copy's speed).
#include <map>
#include <tuple>

#include "apptracer/enums.h"
#include "analyzer/stats/stats_reports.h"
#include "analyzer/stats/sums.h"
#include "analyzer/stats/transfer_totals.h"

namespace apptracer {

Table copies_report(trace::Trace& trace) {
  std::map<std::tuple<CopyKind, MemoryKind, MemoryKind>, TransferTotals> groups;
  for (const trace::Transfer& transfer : trace.operations().copies()) {
    const auto& copy = *transfer.copy_row();
    groups[{copy.kind, copy.src_memory, copy.dst_memory}].add(
        copy.bytes, recorded_ns(copy.gpu_start_ns, copy.gpu_end_ns));
  }
  Table table{"copies", {"kind", "src_memory", "dst_memory"}, {}};
  table.columns.insert(table.columns.end(), std::begin(kTransferColumns), std::end(kTransferColumns));
  for (const auto& [key, totals] : groups) {
    auto [kind, src, dst] = key;
    std::vector<Cell> row{std::string(to_string(kind)), std::string(to_string(src)),
                          std::string(to_string(dst))};
    append_transfer_cells(row, totals);
    table.rows.push_back(std::move(row));
  }
  return table;
}

}  // namespace apptracer
