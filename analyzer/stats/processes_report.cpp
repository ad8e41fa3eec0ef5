// One line per process: what it is and how much it did. For a trace of one
// process it heads the report; for a merged trace it compares the processes
// (forked children, ranks of a job) side by side.
#include <map>

#include "analyzer/trace/trace.h"

#include "analyzer/stats/stats_reports.h"
#include "analyzer/stats/sums.h"

namespace apptracer {

namespace {

// A process's sums; a sum over no value is 0.
struct ProcessSums {
  int64_t api_calls = 0, api_ns = 0, kernels = 0, kernel_ns = 0, copies = 0, copy_bytes = 0,
          sync_ns = 0;
};

void add(int64_t& sum, int64_t value) { sum = saturating_add(sum, value); }

}  // namespace

Table processes_report(trace::Trace& trace) {
  std::map<int64_t, ProcessSums> sums;
  for (const auto& call : trace.rows<ApiCallRow>()) {
    ProcessSums& process = sums[call.process];
    ++process.api_calls;
    add(process.api_ns, saturating_sub(call.end_ns, call.start_ns));
  }
  for (const trace::Kernel& launch : trace.operations().kernels()) {
    const auto& kernel = *launch.row;
    ProcessSums& process = sums[kernel.process];
    ++process.kernels;
    add(process.kernel_ns, recorded_ns(kernel.gpu_start_ns, kernel.gpu_end_ns).value_or(0));
  }
  for (const trace::Transfer& transfer : trace.operations().copies()) {
    const auto& copy = *transfer.copy_row();
    ProcessSums& process = sums[copy.process];
    ++process.copies;
    add(process.copy_bytes, copy.bytes);
  }
  for (const trace::Sync& wait : trace.operations().syncs()) {
    const auto& sync = wait.row();
    add(sums[sync.process].sync_ns, saturating_sub(sync.end_ns, sync.start_ns));
  }

  Table table{"processes",
              {"process_id", "pid", "program", "status", "api_calls", "api_ns", "kernels",
               "kernel_ns", "copies", "copy_bytes", "sync_ns"},
              {}};
  for (const trace::TraceProcess& process : trace.processes().list) {
    const ProcessSums& sum = sums[process.process_id];
    table.rows.push_back({process.process_id, process.pid, process.name, process.status,
                          sum.api_calls, sum.api_ns, sum.kernels, sum.kernel_ns, sum.copies,
                          sum.copy_bytes, sum.sync_ns});
  }
  return table;
}

}  // namespace apptracer
