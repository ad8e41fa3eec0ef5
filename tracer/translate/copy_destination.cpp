#include "translate/copy_destination.h"

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cupti.h>

#include "translate/handlers.h"
#include "translate/traced_function.h"

namespace apptracer {

namespace {

PageTouch probe(uint64_t destination, uint64_t bytes) {
  return bytes >= kProbedCopyBytes ? page_touch(destination, bytes) : PageTouch{};
}

// A copy in a direction the driver infers: probed unless its destination is
// in a region of CUDA's memory.
PageTouch probe_unless_cuda_memory(uint64_t destination, uint64_t bytes, const AddressRegions& cuda_memory) {
  if (bytes < kProbedCopyBytes || cuda_memory.may_contain(destination)) return {};
  return page_touch(destination, bytes);
}

}  // namespace

PageTouch probe_copy_destination(const TracedFunction& function, const void* params,
                                 const AddressRegions& cuda_memory) {
  // Each variant of these handlers' functions (async, per-thread) starts
  // with the same fields as the struct read here (traced_functions.def).
  if (function.handler == &runtime_calls::copy_linear) {
    auto& p = *static_cast<const cudaMemcpy_v3020_params*>(params);
    auto destination = reinterpret_cast<uintptr_t>(p.dst);
    if (p.kind == cudaMemcpyDeviceToHost) return probe(destination, p.count);
    if (p.kind == cudaMemcpyDefault) return probe_unless_cuda_memory(destination, p.count, cuda_memory);
    return {};
  }
  if (function.handler == &driver_calls::copy_dtoh) {
    auto& p = *static_cast<const cuMemcpyDtoH_v2_params*>(params);
    return probe(reinterpret_cast<uintptr_t>(p.dstHost), p.ByteCount);
  }
  if (function.handler == &driver_calls::copy_linear) {
    auto& p = *static_cast<const cuMemcpy_params*>(params);
    return probe_unless_cuda_memory(p.dst, p.ByteCount, cuda_memory);
  }
  return {};
}

}  // namespace apptracer
