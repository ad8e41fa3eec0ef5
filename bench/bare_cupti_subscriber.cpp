// The floor: a preloaded CUPTI subscriber that enables exactly the callbacks
// and activity kinds (unified-memory counters included) apptracer enables, and
// records nothing. What the tracer
// costs beyond this is ours; what this costs is CUPTI's.
//   LD_PRELOAD=libbare_cupti_subscriber.so ./app
#include <cupti.h>

#include <cstdio>
#include <cstdlib>

#include "capture/cupti_requests.h"

namespace {

// Records nothing; like the tracer, it configures the unified-memory
// counters once the driver is up (the first context).
void CUPTIAPI on_callback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId id, const void*) {
  static bool um_counters_enabled = false;
  if (domain == CUPTI_CB_DOMAIN_RESOURCE && id == CUPTI_CBID_RESOURCE_CONTEXT_CREATED &&
      !um_counters_enabled) {
    um_counters_enabled = true;
    apptracer::enable_traced_um_counters();
  }
}

void CUPTIAPI give_buffer(uint8_t** buffer, size_t* size, size_t* max_records) {
  constexpr size_t kBytes = 8u << 20;
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kBytes));
  *size = *buffer ? kBytes : 0;
  *max_records = 0;
}

void CUPTIAPI drop_buffer(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t) { std::free(buffer); }

void flush_at_exit() { cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED); }

__attribute__((constructor)) void subscribe() {
  CUpti_SubscriberHandle subscriber;
  if (cuptiSubscribe(&subscriber, on_callback, nullptr) != CUPTI_SUCCESS) {
    std::fprintf(stderr, "bare_cupti_subscriber: CUPTI unavailable\n");
    return;
  }
  apptracer::enable_traced_callbacks(subscriber, nullptr);
  cuptiActivityRegisterCallbacks(give_buffer, drop_buffer);
  for (CUpti_ActivityKind kind : apptracer::traced_activity_kinds()) cuptiActivityEnable(kind);
  std::atexit(flush_at_exit);
}

}  // namespace
