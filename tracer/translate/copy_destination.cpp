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

}  // namespace

PageTouch probe_copy_destination(const TracedFunction& function, const void* params) {
  // Each variant of these handlers' functions (async, per-thread) starts
  // with the same fields as the struct read here (traced_functions.def).
  if (function.handler == &runtime_calls::copy_linear) {
    auto& p = *static_cast<const cudaMemcpy_v3020_params*>(params);
    if (p.kind != cudaMemcpyDeviceToHost && p.kind != cudaMemcpyDefault) return {};
    return probe(reinterpret_cast<uintptr_t>(p.dst), p.count);
  }
  if (function.handler == &driver_calls::copy_dtoh) {
    auto& p = *static_cast<const cuMemcpyDtoH_v2_params*>(params);
    return probe(reinterpret_cast<uintptr_t>(p.dstHost), p.ByteCount);
  }
  if (function.handler == &driver_calls::copy_linear) {
    auto& p = *static_cast<const cuMemcpy_params*>(params);
    return probe(p.dst, p.ByteCount);
  }
  return {};
}

}  // namespace apptracer
