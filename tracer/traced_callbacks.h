// What the tracer asks CUPTI for: the callback ids it translates and the
// activity kinds it records. Kept in one place so the benchmark's bare CUPTI
// subscriber enables exactly the same set (the floor we compare against).
#pragma once

#include <cupti.h>

#include <cstddef>

namespace apptracer {

template <typename T>
struct IdList {
  const T* ids;
  size_t count;
  const T* begin() const { return ids; }
  const T* end() const { return ids + count; }
};

IdList<CUpti_CallbackId> traced_runtime_callbacks();
IdList<CUpti_CallbackId> traced_driver_callbacks();
IdList<CUpti_CallbackId> traced_resource_callbacks();
// CONCURRENT_KERNEL, never KERNEL: the latter serializes kernels (DESIGN.md).
IdList<CUpti_ActivityKind> traced_activity_kinds();

}  // namespace apptracer
