// `stats --report um`: unified memory, per managed allocation and per kernel.
// Both tables share one attribution of CUPTI's unified-memory records to
// kernels, prefetches and host phases (analyzer/um_attribution.h).
#include <algorithm>

#include "analyzer/trace/trace.h"
#include "apptracer/enums.h"
#include "analyzer/stats/stats_reports.h"
#include "analyzer/trace/trace_file.h"

namespace apptracer {

namespace {

bool has_um_data(trace::Trace& trace) {
  const auto& allocations = trace.operations().allocations();
  const auto& copies = trace.operations().copies();
  return std::any_of(allocations.begin(), allocations.end(),
                     [](const auto& allocation) { return allocation.kind() == AllocKind::Managed; }) ||
         !trace.rows<UmEventRow>().empty() || !trace.rows<MemAdviceRow>().empty() ||
         std::any_of(copies.begin(), copies.end(),
                     [](const auto& copy) { return copy.kind() == CopyKind::Prefetch; });
}

}  // namespace

void for_each_managed_argument(
    trace::Trace& trace,
    const std::function<void(const trace::Kernel& kernel, int64_t alloc_id)>& visit) {
  const trace::KernelArguments& arguments = trace.kernel_arguments();
  const trace::TraceOperations& ops = trace.operations();
  for (const trace::Kernel& kernel : ops.kernels()) {
    for (const trace::KernelWord& word : arguments.of(*kernel.row)) {
      if (!word.alloc_id) continue;
      const trace::Allocation* allocation = ops.allocation(*word.alloc_id);
      if (allocation && allocation->kind() == AllocKind::Managed) visit(kernel, *word.alloc_id);
    }
  }
}

ReportOutput um_report(trace::Trace& trace) {
  if (!trace::has_um_columns(trace)) {
    return {{},
            "trace schema version " + trace_meta(trace.db(), "schema_version", "?") +
                " is too old for the um report (it needs version 2); record the program again"};
  }
  if (!has_um_data(trace)) {
    return {{},
            "no unified memory in this trace: no managed allocations, migrations, faults, "
            "prefetches or advice"};
  }
  const trace::UmTrace& um = trace.unified_memory();
  // Migrations cost on-demand paging half its speed, so they are recorded
  // only when asked for: without them the tables hold no bytes moved.
  std::string counters = trace.meta("um_counters");
  std::string note;
  if (counters.find("not asked for: bytes HtoD") != std::string::npos) {
    note = "migrations were not recorded (the default leaves them out: they slow on-demand "
           "migration); record --unified-memory all to see where pages moved";
  }
  return {{um_allocations_report(trace, um), um_kernels_report(trace, um)}, note};
}

}  // namespace apptracer
