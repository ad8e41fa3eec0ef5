// What NVML says about how GPUs connect: NVLink links and whether peer
// traffic uses them, each GPU's PCIe link, the PCIe path between two GPUs,
// and the driver's version. libnvidia-ml.so.1 is loaded at run time; without
// it the system file simply lacks these details (and says so).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analyzer/model/system_model.h"

namespace apptracer::links {

struct NvmlTopology {
  bool available = false;
  std::string why_not;  // one line when not available
  std::string driver_version;
};

// Fills the NVML fields of `gpus` (found by PCI bus id) and of every
// connection in `connections` (whose gpu/peer are ordinals of `gpus`).
NvmlTopology read_nvml_topology(std::vector<model::GpuInfo>& gpus,
                                std::vector<model::GpuConnection>& connections);

// NVML's topology level (nvmlGpuTopologyLevel_t) in words.
std::string pcie_path_name(int level);

}  // namespace apptracer::links
