// The system file: a SystemModel as JSON (README.md, "The system file").
//
//   {"format": "apptracer system", "version": 1,
//    "machine": {"hostname", "cpu_model", "cpu_sockets", "numa_nodes": [...],
//                "gpus": [...], "connections": [...], "driver_version",
//                "cuda_driver_version", "measured_at", "quick", "unavailable": [...]},
//    "paths": [{"name": "HtoD.pinned.node0.gpu0", "note": "...",
//               "samples": [{"bytes": 4, "ns": [2100.5, 2080.0, ...]}, ...],
//               "model": {"latency_ns": 2050.0,
//                         "bandwidth": [{"bytes": 4, "gbps": 0.002}, ...]},
//               "duplex": {"bytes": 67108864, "gbps": 41.5, "factor": 0.83}}],
//    "graph_launch": {"gpu": 0, "node_ns": 850.0, "launch_ns": 2400.0,
//                     "launch_ns_per_node": 4.0,
//                     "samples": [{"nodes": 64, "node_ns": [...], "launch_ns": [...]}, ...]},
//    "tracing_cost": {"gpu": 0, "api": "cuLaunchKernel", "untraced_ns": 2100.0,
//                     "full_ns": 3400.0, "timing_ns": 3100.0,
//                     "full_callbacks_ns": 310.0, "timing_callbacks_ns": 240.0,
//                     "samples": {"untraced_ns": [...], "full_ns": [...], "timing_ns": [...],
//                                 "full_callbacks_ns": [...], "timing_callbacks_ns": [...]}}}
//
// A path's "model" may be left out (it is then fitted from its samples) and
// its "samples" too (a hand-written model), not both; "duplex" (HtoD and
// DtoH paths: MeasuredPath::duplex) may be left out, or given as its
// "factor" alone. "graph_launch" (SystemModel::graph_launch) came with
// version 2 and may be left out; given, it needs its model ("node_ns",
// "launch_ns") or its "samples" (fitted when read). "tracing_cost"
// (SystemModel::tracing_cost) came with version 3 and may be left out;
// given, it needs its three medians; its callbacks' ("full_callbacks_ns",
// "timing_callbacks_ns": the tracer's own part) may be left out. Unknown keys are
// ignored, so later versions can add to the format.
#pragma once

#include <stdexcept>
#include <string>

#include "analyzer/model/system_model.h"

namespace apptracer::model {

// Every way a system file can be wrong, as one line naming the file.
class SystemFileError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

SystemModel load_system(const std::string& path);

// The same through text; `source` names the text in errors.
std::string system_to_json(const SystemModel& system);
SystemModel system_from_json(const std::string& text, const std::string& source);

}  // namespace apptracer::model
