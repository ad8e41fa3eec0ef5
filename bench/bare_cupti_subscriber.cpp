// The floor: a preloaded CUPTI subscriber that enables exactly the callbacks
// and activity kinds (unified-memory counters included) apptracer enables, and
// records nothing. What the tracer
// costs beyond this is ours; what this costs is CUPTI's.
//   LD_PRELOAD=libbare_cupti_subscriber.so ./app
#include <cupti.h>

#include <cstdio>
#include <cstdlib>

#include "apptracer/um_counter_groups.h"
#include "capture/activity_buffer_pool.h"
#include "capture/cupti_requests.h"

namespace {

// Buffers as the tracer takes them: zeroed, two pre-faulted at the first context.
apptracer::ActivityBufferPool buffers;

// Records nothing; like the tracer, it configures the unified-memory
// counters and pre-faults buffers once the driver is up (the first context).
void CUPTIAPI on_callback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId id, const void*) {
  static bool um_counters_enabled = false;
  if (domain == CUPTI_CB_DOMAIN_RESOURCE && id == CUPTI_CBID_RESOURCE_CONTEXT_CREATED &&
      !um_counters_enabled) {
    um_counters_enabled = true;
    buffers.prefill(2);
    const char* asked = std::getenv("APPTRACER_UNIFIED_MEMORY");
    if (auto kinds = apptracer::um_counter_kinds(asked ? asked : "")) {
      apptracer::enable_traced_um_counters(*kinds);
    }
  }
}

void CUPTIAPI give_buffer(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = buffers.take();
  *size = *buffer ? apptracer::ActivityBufferPool::kBufferBytes : 0;
  *max_records = 0;
}

void CUPTIAPI drop_buffer(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid_bytes) {
  buffers.give_back(buffer, valid_bytes);
}

void flush_at_exit() { cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED); }

__attribute__((constructor)) void subscribe() {
  CUpti_SubscriberHandle subscriber;
  if (cuptiSubscribe(&subscriber, on_callback, nullptr) != CUPTI_SUCCESS) {
    std::fprintf(stderr, "bare_cupti_subscriber: CUPTI unavailable\n");
    return;
  }
  apptracer::enable_traced_callbacks(subscriber, nullptr);
  // What a runtime launch's own callback pair costs, beside the nested
  // driver launch's (a launch fires both): BARE_WITHOUT_RUNTIME_LAUNCH=1
  // turns the runtime's off.
  if (const char* without = std::getenv("BARE_WITHOUT_RUNTIME_LAUNCH"); without && *without == '1')
    cuptiEnableCallback(0, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API,
                        CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000);
  apptracer::request_zeroed_activity_buffers();
  cuptiActivityRegisterCallbacks(give_buffer, drop_buffer);
  for (CUpti_ActivityKind kind : apptracer::traced_activity_kinds()) cuptiActivityEnable(kind);
  std::atexit(flush_at_exit);
}

}  // namespace
