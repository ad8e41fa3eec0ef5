#include "analyzer/stats/stats_reports.h"

namespace apptracer {

namespace {

template <Table (*Report)(trace::Trace&)>
ReportOutput one_table(trace::Trace& trace) {
  return {{Report(trace)}, {}};
}

}  // namespace

const std::vector<StatsReport>& stats_reports() {
  static const std::vector<StatsReport> reports = {
      {"processes", "per process: API calls, kernels, copies, time blocked",
       one_table<processes_report>},
      {"api", "API calls by function: count and host time", one_table<api_calls_report>},
      {"kernels", "GPU kernels by demangled name: count and GPU time",
       one_table<kernels_report>},
      {"copies", "copies by kind and memory kinds: bytes, time, achieved bandwidth",
       one_table<copies_report>},
      {"kernel_traffic",
       "kernels' loads and stores in another GPU's memory or pinned host memory, by path: bytes "
       "exact (record --exact) or a bound (pointer arguments to their allocations' ends)",
       kernel_traffic_report},
      {"memsets", "memsets by memory kind: bytes, time, achieved bandwidth",
       one_table<memsets_report>},
      {"allocations", "allocations by place and kind: bytes, peak live bytes",
       one_table<allocations_report>},
      {"buffers", "each allocation GPU work used: kernels, copies in/out, memsets",
       one_table<buffers_report>},
      {"steps",
       "per step (NVTX step ranges, else the repeating launch sequence) and for start-up: start, "
       "wall, GPU busy, launches, copies, memsets, host gap; the median step and how steps were "
       "found",
       steps_report},
      {"modules",
       "PyTorch: per module and phase (forward, backward, or a scope such as the optimizer's "
       "step); JAX: per flax module and phase, else the jitted function (a scope): kernels, "
       "copies, memsets and allocations it issued, and their GPU time",
       modules_report},
      {"ops", "PyTorch: per aten op (or autograd node); JAX: per primitive, else HLO op: the same", ops_report},
      {"syncs", "synchronizations by kind: host time blocked", one_table<syncs_report>},
      {"streams", "per GPU stream: operations and busy time", one_table<streams_report>},
      {"collectives",
       "NCCL / MPI operations by kind, ranks and size: count, time, algorithm, algbw and busbw "
       "as nccl-tests define them",
       one_table<collectives_report>},
      {"stragglers",
       "merged traces: per collective, the rank that arrived last, the others' wait and what held "
       "it back (GPU work, a synchronization, a host call or a host gap)",
       stragglers_report},
      {"um",
       "unified memory: migrations, faults, advice per managed allocation; first vs later "
       "launches per kernel",
       um_report},
      {"exact",
       "--exact: per kernel, pointers whose assumed access was wrong (only read, only written, "
       "never touched) and memory touched outside its arguments",
       exact_report},
      {"memory_timeline",
       "only when asked for: bytes in use per GPU (allocations, framework blocks) and unified "
       "memory migrated, at each change",
       one_table<memory_timeline_report>, false},
      {"memory",
       "only when asked for: each device's peak memory in use, by owner (program, framework "
       "tensors and cache, NCCL/MPI, cuBLAS/cuDNN and other library workspaces, pinned and mapped "
       "host); the live set at the peak with producer and first/last use; each step's memory; the "
       "peak if blocks were freed at last use or caches released between steps",
       memory_report, false},
      {"tracer",
       "only when asked for: what apptracer itself took of the run, per site (CUDA callbacks, "
       "allocator hooks, module and op ranges on the program's threads; CUPTI's and the writer's "
       "threads): calls, time per call, share of the run, from its sampled timing",
       tracer_report, false},
  };
  return reports;
}

}  // namespace apptracer
