// The slot pool's view of the GPU, through the sanitizer's memory API (its
// allocations are invisible to the program and to the callbacks).
#pragma once

#include "exact/sanitizer_api.h"
#include "exact/slot_pool.h"

namespace apptracer::exact {

class SanitizerMemory : public DeviceMemory {
 public:
  explicit SanitizerMemory(const SanitizerApi& api) : api_(api) {}

  void* allocate(void* context, uint64_t bytes) override;
  void release(void* context, void* device) override;
  bool to_host(void* host, const void* device, uint64_t bytes, StreamHandle stream) override;
  bool to_device(void* device, const void* host, uint64_t bytes, StreamHandle stream) override;
  bool zero(void* device, uint64_t bytes, StreamHandle stream) override;
  bool synchronize(StreamHandle stream) override;

 private:
  const SanitizerApi& api_;
};

}  // namespace apptracer::exact
