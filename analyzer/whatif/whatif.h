// `apptracer whatif`: a trace replayed on a system model, as recorded
// ("baseline": the system's transfer times, nothing else changed) and with
// changes (the what-if), beside what was recorded.
//
//   whatif::WhatifOptions options;
//   options.system_path = "system.json";
//   options.pin = true;
//   whatif::WhatifResult result = whatif::run_whatif(trace, options);
//   result.predicted_ns / result.recorded_ns ...
//
// What is modeled and what is not: README.md, "What-if".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analyzer/trace/trace.h"
#include "analyzer/whatif/critical_path.h"
#include "analyzer/whatif/phases.h"

namespace apptracer::whatif {

struct WhatifOptions {
  std::string system_path;
  std::string system2_path;          // another machine: the what-if runs on it
  bool pin = false;                  // pageable host buffers pinned
  std::optional<int> numa_node;      // host buffers on this NUMA node
  std::vector<std::string> links;    // PATH=bw:GBPS,lat:US (model/link_override.h)
  bool overlap = false;              // copies on their own streams where the DVDG allows
  double kernel_scale = 1.0;         // kernel durations times this
  bool prefetch_managed = false;     // kernels' on-demand migrations prefetched before them (scenario.h)
  bool peer_copies = false;          // relays through host memory between GPUs sent peer to peer (peer_relays.h)
  bool graphs = false;               // the steady steps replayed as CUDA graph launches (graph_regions.h)
  bool no_syncs = false;             // the steady steps' host waits for the GPU taken out (host_waits.h)
  bool non_blocking = false;         // copies to a GPU from the host no longer waited for (host_waits.h)
  // The steady step measured without tracing: the baseline's is fitted to it (untraced_step.h).
  std::optional<int64_t> untraced_step_ns;

  bool changes_anything() const;
  // The changes as command-line words, e.g. {"--pin", "--link HtoD=bw:50"}.
  std::vector<std::string> describe() const;
};

// Copies of one path: what they took and would take. Or kernels' loads or
// stores over it (kernel_traffic.h): `copies` counts the kernels, recorded
// is their durations, baseline and predicted the traffic's modeled time.
struct TransferSummary {
  std::string path;          // their path as recorded ("" for copies no path models: see kind)
  std::string kind;          // copy kind and memory, e.g. "HtoD pageable -> device"; "kernel peer stores"
  bool kernel_traffic = false;
  bool bytes_bound = false;  // kernel traffic: the bytes are an upper bound (no --exact)
  std::string baseline_by;   // the measured path that priced them, "" none (recorded time kept)
  std::string whatif_path;   // their path in the what-if
  std::string whatif_by;
  int64_t copies = 0;
  int64_t bytes = 0;
  int64_t recorded_ns = 0;   // sums of their durations
  int64_t baseline_ns = 0;
  int64_t predicted_ns = 0;
};

struct WhatifResult {
  std::string trace;
  std::string recorded_on;  // the trace's host and GPUs
  std::string system;       // "FILE: " + model::SystemModel::describe()
  std::string system2;      // the same for --system2; "" without it
  std::vector<std::string> changes;
  std::vector<std::string> notes;
  int64_t recorded_ns = 0;   // first API call or GPU work to the last end
  int64_t baseline_ns = 0;
  int64_t predicted_ns = 0;  // = baseline_ns without changes
  std::vector<Phase> phases;  // ns: recorded, baseline, predicted
  std::vector<TransferSummary> transfers;
  CriticalPath critical_path;  // of the what-if (of the baseline without changes)
};

// Throws model::SystemFileError, TraceError, std::invalid_argument (a bad
// --link), each with a one-line message.
WhatifResult run_whatif(trace::Trace& trace, const WhatifOptions& options);

}  // namespace apptracer::whatif
