// A machine as `apptracer links` measured it: what it is (GPUs, NUMA nodes,
// how GPUs connect) and, per logical path, the measurements and the fitted
// transfer-time model. `apptracer whatif` replays traces against it; other
// analyses (diagnoses) price a transfer with it:
//
//   model::SystemModel system = model::load_system("system.json");   // system_file.h
//   model::LinkPath pinned{model::LinkKind::HtoD, model::HostMemory::Pinned, 0, 0};
//   if (std::optional<double> ns = system.transfer_ns(pinned, 64 << 20)) ...
//
// transfer_ns resolves the path with fallbacks (a NUMA node or GPU that was
// not measured takes the closest measured one, see resolve()), so a trace
// from another machine with more GPUs or nodes still gets prices.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analyzer/model/graph_launch.h"
#include "analyzer/model/tracing_cost.h"
#include "analyzer/model/link_model.h"
#include "analyzer/model/link_path.h"

namespace apptracer::model {

struct GpuInfo {
  int ordinal = 0;
  std::string name;
  std::string uuid;
  std::string pci_bus_id;
  int numa_node = -1;  // the host node closest to it; -1 unknown
  int64_t memory_bytes = 0;
  int sm_count = 0;
  int cc_major = 0;
  int cc_minor = 0;
  std::optional<int> pcie_generation;  // current link, from NVML
  std::optional<int> pcie_width;
  int nvlinks = 0;  // active NVLink links, from NVML
};

struct NumaNodeInfo {
  int id = 0;
  std::string cpus;  // as the kernel lists them, e.g. "0-31,64-95"
  int64_t memory_bytes = 0;
};

// How one GPU reaches another.
struct GpuConnection {
  int gpu = 0;
  int peer = 0;
  bool peer_access = false;               // cuDeviceCanAccessPeer
  std::optional<int> performance_rank;    // CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK
  bool nvlink = false;                    // NVML: peer traffic goes over NVLink
  std::string pcie_path;                  // NVML's common ancestor, e.g. "host bridge"
};

struct Machine {
  std::string hostname;
  std::string cpu_model;
  int cpu_sockets = 0;
  std::vector<NumaNodeInfo> numa_nodes;
  std::vector<GpuInfo> gpus;
  std::vector<GpuConnection> connections;
  std::string driver_version;   // e.g. "580.65.06"
  int cuda_driver_version = 0;  // e.g. 13000
  std::string measured_at;      // UTC, ISO 8601
  bool quick = false;           // measured with `links --quick`
  // What could not be found out and why, one line each.
  std::vector<std::string> unavailable;
};

// The repetitions measured at one size.
struct SizeSamples {
  int64_t bytes = 0;
  std::vector<double> ns;
};

// A host path's bandwidth while the opposite direction of the same GPU's
// host link runs too (HtoD beside DtoH, from the same kind of host memory):
// PCIe is full duplex, but both directions share the host's memory and
// root complex and, from pageable memory, the CPU's staging copies.
struct Duplex {
  int64_t bytes = 0;  // the size of the copies measured (0: written by hand)
  double gbps = 0;    // this direction's bandwidth while both ran
  double factor = 1;  // gbps / the same copies' bandwidth alone, in (0, 1]
};

struct MeasuredPath {
  LinkPath path;
  std::vector<SizeSamples> samples;  // may be empty in a hand-written system file
  LinkModel model;
  std::string note;  // how it was measured, or why it is approximate
  // HtoD, DtoH: nullopt where not measured (system files from before links
  // measured it; a path added by --link): taken as 1, no contention.
  std::optional<Duplex> duplex;
};

// The outcome of looking a path up.
struct ResolvedPath {
  const MeasuredPath* path = nullptr;  // nullptr: nothing of that kind was measured
  bool exact = false;                  // false: a fallback (see resolve)
};

class SystemModel {
 public:
  Machine machine;
  std::vector<MeasuredPath> paths;
  // What a CUDA graph's launch costs (graph_launch.h); nullopt where not
  // measured (system files from before links measured it, version 1).
  std::optional<GraphLaunch> graph_launch;
  // What tracing adds to a launch (tracing_cost.h); nullopt where not
  // measured (system files before version 3).
  std::optional<TracingCost> tracing_cost;

  // The path measured under exactly this name, or nullptr.
  const MeasuredPath* find(const LinkPath& path) const;
  MeasuredPath* find(const LinkPath& path);

  // The measured path that best stands for `wanted`: one of the same kind
  // and host memory, preferring the same GPU (else a GPU of the same name),
  // the same peer, and the same NUMA node (else the GPU's closest node).
  ResolvedPath resolve(const LinkPath& wanted) const;

  // Time of a transfer of `bytes` over `wanted` (resolved), in ns; nullopt
  // when no path of that kind was measured.
  std::optional<double> transfer_ns(const LinkPath& wanted, int64_t bytes) const;

  // The NUMA node closest to GPU `device`, or -1.
  int nearest_node(int device) const;
  // A one-line description: "host (2x NVIDIA H100 80GB HBM3, 2026-01-01T00:00:00Z)".
  std::string describe() const;
};

}  // namespace apptracer::model
