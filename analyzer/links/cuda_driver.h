// The CUDA driver API, loaded at run time: the analyzer links no CUDA
// library, so it runs (and says what it cannot do) on machines without one.
// Functions are fetched with cuGetProcAddress at the CUDA 13 ABI, so each
// name below has the signature cuda.h gives it (cuMemAlloc is cuMemAlloc_v2).
#pragma once

#include <cuda.h>

#include <stdexcept>
#include <string>

namespace apptracer::links {

#define APPTRACER_LINKS_DRIVER_FUNCTIONS(X) \
  X(cuInit)                                 \
  X(cuDriverGetVersion)                     \
  X(cuGetErrorString)                       \
  X(cuDeviceGetCount)                       \
  X(cuDeviceGet)                            \
  X(cuDeviceGetName)                        \
  X(cuDeviceGetUuid)                        \
  X(cuDeviceGetPCIBusId)                    \
  X(cuDeviceTotalMem)                       \
  X(cuDeviceGetAttribute)                   \
  X(cuDeviceCanAccessPeer)                  \
  X(cuDeviceGetP2PAttribute)                \
  X(cuDevicePrimaryCtxRetain)               \
  X(cuDevicePrimaryCtxRelease)              \
  X(cuCtxSetCurrent)                        \
  X(cuCtxEnablePeerAccess)                  \
  X(cuCtxDisablePeerAccess)                 \
  X(cuMemAlloc)                             \
  X(cuMemFree)                              \
  X(cuMemAllocManaged)                      \
  X(cuMemHostRegister)                      \
  X(cuMemHostUnregister)                    \
  X(cuMemcpyHtoDAsync)                      \
  X(cuMemcpyDtoHAsync)                      \
  X(cuMemcpyDtoDAsync)                      \
  X(cuMemcpyPeerAsync)                      \
  X(cuMemPrefetchAsync)                     \
  X(cuStreamCreate)                         \
  X(cuStreamDestroy)                        \
  X(cuStreamSynchronize)                    \
  X(cuEventCreate)                          \
  X(cuEventDestroy)                         \
  X(cuEventRecord)                          \
  X(cuEventSynchronize)                     \
  X(cuEventElapsedTime)                     \
  X(cuModuleLoadData)                       \
  X(cuModuleUnload)                         \
  X(cuModuleGetFunction)                    \
  X(cuLaunchKernel)                         \
  X(cuStreamBeginCapture)                   \
  X(cuStreamEndCapture)                     \
  X(cuGraphInstantiateWithFlags)            \
  X(cuGraphLaunch)                          \
  X(cuGraphExecDestroy)                     \
  X(cuGraphDestroy)

// A failed driver call: "cuMemAlloc: out of memory".
class DriverError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct CudaDriver {
#define APPTRACER_LINKS_MEMBER(name) decltype(&::name) name = nullptr;
  APPTRACER_LINKS_DRIVER_FUNCTIONS(APPTRACER_LINKS_MEMBER)
#undef APPTRACER_LINKS_MEMBER

  // Throws DriverError naming the call when `result` is not success.
  void check(CUresult result, const char* call) const;
};

// Loads libcuda.so.1 and every function above, and initializes the driver.
// Throws DriverError with a one-line reason (no driver, driver older than
// CUDA 13, no GPU).
const CudaDriver& load_cuda_driver();

}  // namespace apptracer::links
