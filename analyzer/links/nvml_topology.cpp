#include "analyzer/links/nvml_topology.h"

#include <dlfcn.h>

namespace apptracer::links {

namespace {

// The few NVML declarations used, as nvml.h has them (its ABI is stable; the
// toolkit ships no nvml.h to include).
using NvmlReturn = int;
using NvmlDevice = struct NvmlDeviceOpaque*;
constexpr NvmlReturn kNvmlSuccess = 0;
constexpr int kNvlinkMaxLinks = 18;  // NVML_NVLINK_MAX_LINKS
constexpr int kP2pCapsNvlink = 2;    // NVML_P2P_CAPS_INDEX_NVLINK
constexpr int kP2pStatusOk = 0;      // NVML_P2P_STATUS_OK
constexpr int kFeatureEnabled = 1;   // NVML_FEATURE_ENABLED

struct Nvml {
  NvmlReturn (*init)() = nullptr;
  NvmlReturn (*shutdown)() = nullptr;
  NvmlReturn (*driver_version)(char*, unsigned) = nullptr;
  NvmlReturn (*handle_by_pci_bus_id)(const char*, NvmlDevice*) = nullptr;
  NvmlReturn (*nvlink_state)(NvmlDevice, unsigned, int*) = nullptr;
  NvmlReturn (*p2p_status)(NvmlDevice, NvmlDevice, int, int*) = nullptr;
  NvmlReturn (*common_ancestor)(NvmlDevice, NvmlDevice, int*) = nullptr;
  NvmlReturn (*pcie_generation)(NvmlDevice, unsigned*) = nullptr;
  NvmlReturn (*pcie_width)(NvmlDevice, unsigned*) = nullptr;
};

template <typename F>
bool load(void* library, F& function, const char* name) {
  function = reinterpret_cast<F>(dlsym(library, name));
  return function != nullptr;
}

}  // namespace

std::string pcie_path_name(int level) {
  switch (level) {
    case 0: return "same board";
    case 10: return "one PCIe switch";
    case 20: return "several PCIe switches";
    case 30: return "one host bridge";
    case 40: return "within one NUMA node";
    case 50: return "across NUMA nodes";
  }
  return "unknown";
}

NvmlTopology read_nvml_topology(std::vector<model::GpuInfo>& gpus,
                                std::vector<model::GpuConnection>& connections) {
  NvmlTopology topology;
  void* library = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    topology.why_not = "NVML (libnvidia-ml.so.1 not found: no NVLink or PCIe link details)";
    return topology;
  }
  Nvml nvml;
  bool complete = load(library, nvml.init, "nvmlInit_v2") &&
                  load(library, nvml.shutdown, "nvmlShutdown") &&
                  load(library, nvml.driver_version, "nvmlSystemGetDriverVersion") &&
                  load(library, nvml.handle_by_pci_bus_id, "nvmlDeviceGetHandleByPciBusId_v2") &&
                  load(library, nvml.nvlink_state, "nvmlDeviceGetNvLinkState") &&
                  load(library, nvml.p2p_status, "nvmlDeviceGetP2PStatus") &&
                  load(library, nvml.common_ancestor, "nvmlDeviceGetTopologyCommonAncestor") &&
                  load(library, nvml.pcie_generation, "nvmlDeviceGetCurrPcieLinkGeneration") &&
                  load(library, nvml.pcie_width, "nvmlDeviceGetCurrPcieLinkWidth");
  if (!complete || nvml.init() != kNvmlSuccess) {
    topology.why_not = "NVML (libnvidia-ml.so.1 unusable: no NVLink or PCIe link details)";
    dlclose(library);
    return topology;
  }
  topology.available = true;
  char version[96] = {};
  if (nvml.driver_version(version, sizeof version) == kNvmlSuccess) topology.driver_version = version;

  std::vector<NvmlDevice> handles(gpus.size(), nullptr);
  for (size_t i = 0; i < gpus.size(); ++i) {
    model::GpuInfo& gpu = gpus[i];
    if (nvml.handle_by_pci_bus_id(gpu.pci_bus_id.c_str(), &handles[i]) != kNvmlSuccess) continue;
    unsigned value = 0;
    if (nvml.pcie_generation(handles[i], &value) == kNvmlSuccess) gpu.pcie_generation = value;
    if (nvml.pcie_width(handles[i], &value) == kNvmlSuccess) gpu.pcie_width = value;
    for (unsigned link = 0; link < kNvlinkMaxLinks; ++link) {
      int active = 0;
      if (nvml.nvlink_state(handles[i], link, &active) == kNvmlSuccess && active == kFeatureEnabled)
        ++gpu.nvlinks;
    }
  }
  auto index_of = [&](int ordinal) -> int {
    for (size_t i = 0; i < gpus.size(); ++i) {
      if (gpus[i].ordinal == ordinal) return static_cast<int>(i);
    }
    return -1;
  };
  for (model::GpuConnection& connection : connections) {
    int a = index_of(connection.gpu), b = index_of(connection.peer);
    if (a < 0 || b < 0 || !handles[a] || !handles[b]) continue;
    int status = -1, level = -1;
    if (nvml.p2p_status(handles[a], handles[b], kP2pCapsNvlink, &status) == kNvmlSuccess)
      connection.nvlink = status == kP2pStatusOk;
    if (nvml.common_ancestor(handles[a], handles[b], &level) == kNvmlSuccess)
      connection.pcie_path = pcie_path_name(level);
  }
  nvml.shutdown();
  dlclose(library);
  return topology;
}

}  // namespace apptracer::links
