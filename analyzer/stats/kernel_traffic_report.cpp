// Kernels' loads and stores in another GPU's memory (peer access) or in
// pinned host memory, per path (trace/remote_kernel_traffic.h): the bytes
// that cross a link with no copy to show them.
#include "analyzer/stats/stats_reports.h"
#include "analyzer/trace/remote_kernel_traffic.h"

namespace apptracer {

ReportOutput kernel_traffic_report(trace::Trace& trace) {
  std::vector<trace::TrafficTotal> totals = trace::traffic_by_path(trace::remote_kernel_traffic(trace));
  if (totals.empty()) return {{}, "no kernel loaded or stored another GPU's memory or pinned host memory"};
  Table table{"kernel_traffic", {"path", "kind", "kernels", "bytes", "bytes_are"}, {}};
  for (const trace::TrafficTotal& total : totals) {
    table.rows.push_back({total.path, total.kind, Cell(total.kernels), Cell(total.bytes),
                          std::string(trace::bytes_are(total.exact))});
  }
  return {{table}, {}};
}

}  // namespace apptracer
