// The GPUs the driver sees and how each pair can reach the other, from the
// driver API (NVML adds link details: nvml_topology.h).
#pragma once

#include <vector>

#include "analyzer/links/cuda_driver.h"
#include "analyzer/model/system_model.h"

namespace apptracer::links {

struct GpuInventory {
  std::vector<model::GpuInfo> gpus;
  std::vector<model::GpuConnection> connections;  // every ordered pair
  std::vector<bool> managed;  // per GPU: concurrent managed access (prefetch, faults)
};

GpuInventory read_gpu_inventory(const CudaDriver& driver);

}  // namespace apptracer::links
