#include "analyzer/links/gpu_inventory.h"

#include "apptracer/gpu_identity.h"

namespace apptracer::links {

namespace {

int attribute(const CudaDriver& driver, CUdevice_attribute which, CUdevice device) {
  int value = 0;
  driver.check(driver.cuDeviceGetAttribute(&value, which, device), "cuDeviceGetAttribute");
  return value;
}

}  // namespace

GpuInventory read_gpu_inventory(const CudaDriver& driver) {
  GpuInventory inventory;
  int count = 0;
  driver.check(driver.cuDeviceGetCount(&count), "cuDeviceGetCount");
  std::vector<CUdevice> devices(count);
  for (int ordinal = 0; ordinal < count; ++ordinal) {
    CUdevice& device = devices[ordinal];
    driver.check(driver.cuDeviceGet(&device, ordinal), "cuDeviceGet");
    model::GpuInfo gpu;
    gpu.ordinal = ordinal;
    char text[256] = {};
    driver.check(driver.cuDeviceGetName(text, sizeof text, device), "cuDeviceGetName");
    gpu.name = text;
    CUuuid uuid{};
    driver.check(driver.cuDeviceGetUuid(&uuid, device), "cuDeviceGetUuid");
    gpu.uuid = format_gpu_uuid(uuid.bytes);
    driver.check(driver.cuDeviceGetPCIBusId(text, sizeof text, device), "cuDeviceGetPCIBusId");
    gpu.pci_bus_id = text;
    gpu.numa_node = numa_node_of_pci(gpu.pci_bus_id);
    size_t bytes = 0;
    driver.check(driver.cuDeviceTotalMem(&bytes, device), "cuDeviceTotalMem");
    gpu.memory_bytes = static_cast<int64_t>(bytes);
    gpu.sm_count = attribute(driver, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device);
    gpu.cc_major = attribute(driver, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device);
    gpu.cc_minor = attribute(driver, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device);
    inventory.managed.push_back(
        attribute(driver, CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS, device) != 0);
    inventory.gpus.push_back(gpu);
  }
  for (int a = 0; a < count; ++a) {
    for (int b = 0; b < count; ++b) {
      if (a == b) continue;
      model::GpuConnection connection;
      connection.gpu = a;
      connection.peer = b;
      int can = 0;
      driver.check(driver.cuDeviceCanAccessPeer(&can, devices[a], devices[b]), "cuDeviceCanAccessPeer");
      connection.peer_access = can != 0;
      int rank = 0;
      if (driver.cuDeviceGetP2PAttribute(&rank, CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK, devices[a],
                                         devices[b]) == CUDA_SUCCESS && can) {
        connection.performance_rank = rank;
      }
      inventory.connections.push_back(connection);
    }
  }
  return inventory;
}

}  // namespace apptracer::links
