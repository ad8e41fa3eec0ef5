// A GPU as the trace's `devices` table describes it.
#pragma once

#include <cstdint>
#include <string>

namespace apptracer {

struct DeviceInfo {
  int ordinal = 0;
  std::string name;
  std::string uuid;
  std::string pci_bus_id;
  int cc_major = 0;
  int cc_minor = 0;
  uint64_t total_memory_bytes = 0;
  int sm_count = 0;
  int numa_node = -1;
  int pageable_memory_access = -1;  // CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS; -1: not known
};

}  // namespace apptracer
