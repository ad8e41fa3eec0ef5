#include "stats_reports.h"

namespace apptracer {

const std::vector<StatsReport>& stats_reports() {
  static const std::vector<StatsReport> reports = {
      {"processes", "per process: API calls, kernels, copies, time blocked", processes_report},
      {"api", "API calls by function: count and host time", api_calls_report},
      {"kernels", "GPU kernels by demangled name: count and GPU time", kernels_report},
      {"copies", "copies by kind and memory kinds: bytes, time, achieved bandwidth", copies_report},
      {"memsets", "memsets by memory kind: bytes, time, achieved bandwidth", memsets_report},
      {"allocations", "allocations by place and kind: bytes, peak live bytes", allocations_report},
      {"buffers", "each allocation GPU work used: kernels, copies in/out, memsets", buffers_report},
      {"syncs", "synchronizations by kind: host time blocked", syncs_report},
      {"streams", "per GPU stream: operations and busy time", streams_report},
  };
  return reports;
}

}  // namespace apptracer
