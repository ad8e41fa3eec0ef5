// The reports of `apptracer stats`: each reads a trace through the trace
// model (analyzer/trace/trace.h), which `stats` opens once so every report
// shares each table it reads, and returns its tables (most have one) whose
// numbers are defined in its own file. All durations are nanoseconds;
// bandwidths are GB/s (10^9 bytes per second, which is bytes per ns).
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "analyzer/trace/trace.h"
#include "analyzer/table/table.h"

namespace apptracer {

// What one report gives: its tables, or none and a one-line note saying why
// (a trace without unified-memory data has nothing for `--report um`).
struct ReportOutput {
  std::vector<Table> tables;
  std::string note;
};

struct StatsReport {
  const char* name;         // what --report takes
  const char* description;  // one line for --help
  ReportOutput (*compute)(trace::Trace& trace);
  bool by_default = true;  // printed by `stats` without --report
};

// Every report, in the order `stats` prints them.
const std::vector<StatsReport>& stats_reports();

Table processes_report(trace::Trace& trace);
Table api_calls_report(trace::Trace& trace);
Table kernels_report(trace::Trace& trace);
Table copies_report(trace::Trace& trace);
// Kernels' loads and stores over peer and host paths, per path: bytes exact
// (--exact) or a bound; a note when no kernel reached such memory.
ReportOutput kernel_traffic_report(trace::Trace& trace);
Table memsets_report(trace::Trace& trace);
Table allocations_report(trace::Trace& trace);
Table buffers_report(trace::Trace& trace);
// Per step and for start-up: wall, GPU busy, launches, copies, host gap;
// per process the median step and how its steps were found; or a note when
// the trace has no steps.
ReportOutput steps_report(trace::Trace& trace);
Table syncs_report(trace::Trace& trace);
Table streams_report(trace::Trace& trace);
Table collectives_report(trace::Trace& trace);
// Unified memory: um_allocations and um_kernels, or a note when the trace
// has no unified-memory data or predates it.
ReportOutput um_report(trace::Trace& trace);
Table um_allocations_report(trace::Trace& trace, const trace::UmTrace& um);
Table um_kernels_report(trace::Trace& trace, const trace::UmTrace& um);
// visit(kernel, alloc_id) for each launch's argument word that points into
// managed memory (a launch with two such words: twice).
void for_each_managed_argument(
    trace::Trace& trace,
    const std::function<void(const trace::Kernel& kernel, int64_t alloc_id)>& visit);
// A merged trace's collectives whose last rank arrived late: by how much,
// the others' wait, and what held it back; or a note when none is joined.
ReportOutput stragglers_report(trace::Trace& trace);
// --exact: where the signature heuristic was wrong, per kernel name, or a
// note when the trace has no exact data.
ReportOutput exact_report(trace::Trace& trace);
// PyTorch programs: the work each module (forward, backward, named scope)
// and each op issued, or a note when the trace has no framework ranges.
ReportOutput modules_report(trace::Trace& trace);
ReportOutput ops_report(trace::Trace& trace);
// Both, from one pass over the trace's work.
std::pair<ReportOutput, ReportOutput> modules_and_ops_reports(trace::Trace& trace);
// What apptracer itself took of the run, per site (tracer_time), or a note
// when the trace predates it.
ReportOutput tracer_report(trace::Trace& trace);
// Bytes in use per GPU and unified memory migrated over time.
Table memory_timeline_report(trace::Trace& trace);
// Where each device's memory went (analyzer/memory), or a note when the
// trace records no allocation.
ReportOutput memory_report(trace::Trace& trace);

}  // namespace apptracer
