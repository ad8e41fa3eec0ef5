// Driver API functions the tracer calls itself, fetched at run time from
// libcuda.so.1. The tracer never links libcuda: on a machine without a driver
// that would stop the program from loading (docs/architecture.md, failure rules).
#pragma once

#include <cuda.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "base/device_info.h"

namespace apptracer {

// A launched function's mangled name, for launches whose callback carries no
// symbolName. Handles may be CUkernel (runtime launches) or CUfunction.
std::string driver_function_name(const void* function);

// Where each parameter of a launched function sits in its parameter buffer.
struct ParamLayout {
  std::vector<uint32_t> offsets;
  std::vector<uint32_t> sizes;
};

// The layout of a function's parameters (cuFuncGetParamInfo, or
// cuKernelGetParamInfo for the CUkernel handles of runtime launches); empty
// when the driver cannot say. Not cached: callers cache per handle.
ParamLayout driver_param_layout(const void* function);

// The base and size of the device allocation holding `address` ({0, 0}
// when the driver does not know it).
std::pair<uint64_t, uint64_t> driver_allocation_range(uint64_t address);

// The driver's getters of a graph node's type and parameters (each nullptr
// where the driver lacks it), called from CUPTI's graph callbacks.
struct DriverGraphFunctions {
  CUresult (*node_type)(CUgraphNode, CUgraphNodeType*) = nullptr;
  CUresult (*kernel_params)(CUgraphNode, CUDA_KERNEL_NODE_PARAMS*) = nullptr;
  CUresult (*memcpy_params)(CUgraphNode, CUDA_MEMCPY3D*) = nullptr;
  CUresult (*memset_params)(CUgraphNode, CUDA_MEMSET_NODE_PARAMS*) = nullptr;
};
const DriverGraphFunctions& driver_graph_functions();

// The calling thread's current context (a CUcontext), nullptr when none.
void* driver_current_context();

// Every device the driver sees, with the host NUMA node closest to each.
std::vector<DeviceInfo> driver_devices();

// Whether libcuda.so.1 can be loaded at all (it is not loaded by this call
// unless the program already did or would).
bool driver_present();

// The driver's CUDA version (e.g. 13000), or 0 when no driver is loaded.
int driver_version();

}  // namespace apptracer
