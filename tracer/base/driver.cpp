#include "base/driver.h"

#include <cuda.h>
#include <dlfcn.h>

#include "apptracer/gpu_identity.h"

namespace apptracer {

namespace {

struct DriverFunctions {
  CUresult (*cuDriverGetVersion)(int*) = nullptr;
  CUresult (*cuDeviceGetCount)(int*) = nullptr;
  CUresult (*cuDeviceGet)(CUdevice*, int) = nullptr;
  CUresult (*cuDeviceGetName)(char*, int, CUdevice) = nullptr;
  CUresult (*cuDeviceGetUuid)(CUuuid*, CUdevice) = nullptr;
  CUresult (*cuDeviceGetPCIBusId)(char*, int, CUdevice) = nullptr;
  CUresult (*cuDeviceTotalMem)(size_t*, CUdevice) = nullptr;
  CUresult (*cuDeviceGetAttribute)(int*, CUdevice_attribute, CUdevice) = nullptr;
  CUresult (*cuFuncGetName)(const char**, CUfunction) = nullptr;
  CUresult (*cuKernelGetName)(const char**, CUkernel) = nullptr;
  CUresult (*cuFuncGetParamInfo)(CUfunction, size_t, size_t*, size_t*) = nullptr;
  CUresult (*cuKernelGetParamInfo)(CUkernel, size_t, size_t*, size_t*) = nullptr;
  CUresult (*cuMemGetAddressRange)(CUdeviceptr*, size_t*, CUdeviceptr) = nullptr;
  DriverGraphFunctions graph;
  CUresult (*cuCtxGetCurrent)(CUcontext*) = nullptr;
  bool loaded = false;
};

template <typename F>
void load(void* library, F& function, const char* name) {
  function = reinterpret_cast<F>(dlsym(library, name));
}

const DriverFunctions& driver() {
  static const DriverFunctions functions = [] {
    DriverFunctions f;
    // RTLD_NOLOAD: only a driver the program already loaded; we never load it first.
    void* library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (!library) return f;
    load(library, f.cuDriverGetVersion, "cuDriverGetVersion");
    load(library, f.cuDeviceGetCount, "cuDeviceGetCount");
    load(library, f.cuDeviceGet, "cuDeviceGet");
    load(library, f.cuDeviceGetName, "cuDeviceGetName");
    load(library, f.cuDeviceGetUuid, "cuDeviceGetUuid_v2");
    load(library, f.cuDeviceGetPCIBusId, "cuDeviceGetPCIBusId");
    load(library, f.cuDeviceTotalMem, "cuDeviceTotalMem_v2");
    load(library, f.cuDeviceGetAttribute, "cuDeviceGetAttribute");
    load(library, f.cuFuncGetName, "cuFuncGetName");
    load(library, f.cuKernelGetName, "cuKernelGetName");
    load(library, f.cuFuncGetParamInfo, "cuFuncGetParamInfo");
    load(library, f.cuKernelGetParamInfo, "cuKernelGetParamInfo");
    load(library, f.cuMemGetAddressRange, "cuMemGetAddressRange_v2");
    load(library, f.graph.node_type, "cuGraphNodeGetType");
    load(library, f.graph.kernel_params, "cuGraphKernelNodeGetParams_v2");
    load(library, f.graph.memcpy_params, "cuGraphMemcpyNodeGetParams");
    load(library, f.graph.memset_params, "cuGraphMemsetNodeGetParams");
    load(library, f.cuCtxGetCurrent, "cuCtxGetCurrent");
    f.loaded = f.cuDeviceGetCount != nullptr;
    return f;
  }();
  return functions;
}

}  // namespace

std::string driver_function_name(const void* function) {
  const DriverFunctions& f = driver();
  const char* name = nullptr;
  // Runtime launches pass a CUkernel, on which cuFuncGetName fails (CUDA 13.0).
  if (f.cuFuncGetName && f.cuFuncGetName(&name, (CUfunction)function) == CUDA_SUCCESS && name) {
    return name;
  }
  if (f.cuKernelGetName && f.cuKernelGetName(&name, (CUkernel)function) == CUDA_SUCCESS && name) {
    return name;
  }
  return "";
}

ParamLayout driver_param_layout(const void* function) {
  const DriverFunctions& f = driver();
  ParamLayout layout;
  size_t offset = 0, size = 0;
  // Runtime launches pass a CUkernel, on which cuFuncGetParamInfo fails with
  // CUDA_ERROR_INVALID_HANDLE (CUDA 13.0); the CUkernel query answers for it.
  bool is_function = f.cuFuncGetParamInfo &&
                     f.cuFuncGetParamInfo((CUfunction)function, 0, &offset, &size) !=
                         CUDA_ERROR_INVALID_HANDLE;
  for (size_t index = 0;; ++index) {
    CUresult result = CUDA_ERROR_NOT_FOUND;
    if (is_function) {
      result = f.cuFuncGetParamInfo((CUfunction)function, index, &offset, &size);
    } else if (f.cuKernelGetParamInfo) {
      result = f.cuKernelGetParamInfo((CUkernel)function, index, &offset, &size);
    }
    if (result != CUDA_SUCCESS) break;
    layout.offsets.push_back(static_cast<uint32_t>(offset));
    layout.sizes.push_back(static_cast<uint32_t>(size));
  }
  return layout;
}

std::pair<uint64_t, uint64_t> driver_allocation_range(uint64_t address) {
  const DriverFunctions& f = driver();
  CUdeviceptr base = 0;
  size_t bytes = 0;
  if (!f.cuMemGetAddressRange || f.cuMemGetAddressRange(&base, &bytes, address) != CUDA_SUCCESS) {
    return {0, 0};
  }
  return {base, bytes};
}

const DriverGraphFunctions& driver_graph_functions() { return driver().graph; }

void* driver_current_context() {
  const DriverFunctions& f = driver();
  CUcontext context = nullptr;
  if (!f.cuCtxGetCurrent || f.cuCtxGetCurrent(&context) != CUDA_SUCCESS) return nullptr;
  return context;
}

bool driver_present() {
  void* library = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
  if (!library) library = dlopen("libcuda.so.1", RTLD_LAZY);
  if (!library) return false;
  dlclose(library);
  return true;
}

int driver_version() {
  const DriverFunctions& f = driver();
  int version = 0;
  if (f.cuDriverGetVersion) f.cuDriverGetVersion(&version);
  return version;
}

std::vector<DeviceInfo> driver_devices() {
  const DriverFunctions& f = driver();
  std::vector<DeviceInfo> devices;
  int count = 0;
  if (!f.loaded || f.cuDeviceGetCount(&count) != CUDA_SUCCESS) return devices;
  for (int ordinal = 0; ordinal < count; ++ordinal) {
    CUdevice device = 0;
    if (f.cuDeviceGet(&device, ordinal) != CUDA_SUCCESS) continue;
    DeviceInfo info;
    info.ordinal = ordinal;
    char text[256] = {};
    if (f.cuDeviceGetName(text, sizeof text, device) == CUDA_SUCCESS) info.name = text;
    CUuuid uuid{};
    if (f.cuDeviceGetUuid && f.cuDeviceGetUuid(&uuid, device) == CUDA_SUCCESS) {
      info.uuid = format_gpu_uuid(uuid.bytes);
    }
    if (f.cuDeviceGetPCIBusId(text, sizeof text, device) == CUDA_SUCCESS) info.pci_bus_id = text;
    size_t bytes = 0;
    if (f.cuDeviceTotalMem(&bytes, device) == CUDA_SUCCESS) info.total_memory_bytes = bytes;
    f.cuDeviceGetAttribute(&info.cc_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device);
    f.cuDeviceGetAttribute(&info.cc_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device);
    f.cuDeviceGetAttribute(&info.sm_count, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device);
    int pageable = 0;
    if (f.cuDeviceGetAttribute(&pageable, CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS, device) ==
        CUDA_SUCCESS) {
      info.pageable_memory_access = pageable ? 1 : 0;
    }
    info.numa_node = numa_node_of_pci(info.pci_bus_id);
    devices.push_back(info);
  }
  return devices;
}

}  // namespace apptracer
