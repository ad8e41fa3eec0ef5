#include "exact/sanitizer_memory.h"

#include "base/log.h"

namespace apptracer::exact {

namespace {

Sanitizer_StreamHandle handle(StreamHandle stream) {
  return static_cast<Sanitizer_StreamHandle>(stream);
}

bool succeeded(const SanitizerApi& api, SanitizerResult result, const char* what) {
  if (result == SANITIZER_SUCCESS) return true;
  log_warn("--exact: {} failed: {}", what, describe(api, result));
  return false;
}

}  // namespace

void* SanitizerMemory::allocate(void* context, uint64_t bytes) {
  void* device = nullptr;
  SanitizerResult result = api_.sanitizerAlloc(static_cast<CUcontext>(context), &device, bytes);
  if (result != SANITIZER_SUCCESS) {
    log_warn("--exact: cannot allocate {} MiB of GPU memory for its tables ({}); set "
             "APPTRACER_EXACT_SLOTS or APPTRACER_EXACT_PAGES lower",
             bytes >> 20, describe(api_, result));
    return nullptr;
  }
  return device;
}

void SanitizerMemory::release(void* context, void* device) {
  api_.sanitizerFree(static_cast<CUcontext>(context), device);
}

bool SanitizerMemory::to_host(void* host, const void* device, uint64_t bytes,
                              StreamHandle stream) {
  return succeeded(api_,
                   api_.sanitizerMemcpyDeviceToHost(host, const_cast<void*>(device), bytes,
                                                    handle(stream)),
                   "reading back a launch");
}

bool SanitizerMemory::to_device(void* device, const void* host, uint64_t bytes,
                                StreamHandle stream) {
  return succeeded(api_,
                   api_.sanitizerMemcpyHostToDeviceAsync(device, const_cast<void*>(host), bytes,
                                                         handle(stream)),
                   "resetting a table");
}

bool SanitizerMemory::zero(void* device, uint64_t bytes, StreamHandle stream) {
  return succeeded(api_, api_.sanitizerMemset(device, 0, bytes, handle(stream)),
                   "clearing a table");
}

bool SanitizerMemory::synchronize(StreamHandle stream) {
  return succeeded(api_, api_.sanitizerStreamSynchronize(handle(stream)),
                   "waiting for a table reset");
}

}  // namespace apptracer::exact
