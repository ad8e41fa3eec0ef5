// The floor: a preloaded CUPTI subscriber that enables exactly the callbacks
// and activity kinds (unified-memory counters included) apptracer enables, and
// records nothing. What the tracer
// costs beyond this is ours; what this costs is CUPTI's.
//   LD_PRELOAD=libbare_cupti_subscriber.so ./app
// What each part of that set costs: BARE_WITHOUT=PART[+PART...] leaves the
// parts out (runtime-api, driver-api: every callback of the domain;
// runtime-launch: the runtime's cudaLaunchKernel callback alone, whose
// launch also fires the nested driver launch's; resource; kernel, memcpy,
// memcpy2, memset, stream: the activity kind; zeroed: CUPTI's zeroing of
// activity buffers).
// BARE_GRAPH_TRACE=1 also enables CUPTI_ACTIVITY_KIND_GRAPH_TRACE, a graph
// launch recorded as one activity instead of each node's (what that would
// cost graph-launching programs such as JAX's); whether CUPTI accepted it
// goes to stderr.
// bare_ask_cupti_every_us(US), called by the program (ctypes), asks CUPTI for
// its completed buffers every US microseconds from a thread of its own, as
// the tracer's writer asks after its passes (0 stops): what asking costs the
// program's threads.
#include <cupti.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

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

std::atomic<unsigned> ask_every_us{0};
std::atomic<bool> asker_started{false};

void ask_cupti() {
  for (;;) {
    unsigned us = ask_every_us.load();
    std::this_thread::sleep_for(std::chrono::microseconds(us ? us : 10000));
    if (us) cuptiActivityFlushAll(0);
  }
}

void flush_at_exit() { cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED); }

// Whether BARE_WITHOUT names `part`.
bool left_out(const char* part) {
  const char* without = std::getenv("BARE_WITHOUT");
  if (!without) return false;
  std::string list = std::string("+") + without + "+";
  for (char& c : list) c = c == ',' ? '+' : c;
  return list.find(std::string("+") + part + "+") != std::string::npos;
}

const char* activity_part(CUpti_ActivityKind kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: return "kernel";
    case CUPTI_ACTIVITY_KIND_MEMCPY: return "memcpy";
    case CUPTI_ACTIVITY_KIND_MEMCPY2: return "memcpy2";
    case CUPTI_ACTIVITY_KIND_MEMSET: return "memset";
    case CUPTI_ACTIVITY_KIND_STREAM: return "stream";
    default: return "other";
  }
}

__attribute__((constructor)) void subscribe() {
  CUpti_SubscriberHandle subscriber;
  if (cuptiSubscribe(&subscriber, on_callback, nullptr) != CUPTI_SUCCESS) {
    std::fprintf(stderr, "bare_cupti_subscriber: CUPTI unavailable\n");
    return;
  }
  apptracer::enable_traced_callbacks(subscriber, nullptr);
  if (left_out("runtime-api")) cuptiEnableDomain(0, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API);
  if (left_out("driver-api")) cuptiEnableDomain(0, subscriber, CUPTI_CB_DOMAIN_DRIVER_API);
  if (left_out("resource")) cuptiEnableDomain(0, subscriber, CUPTI_CB_DOMAIN_RESOURCE);
  if (left_out("runtime-launch"))
    cuptiEnableCallback(0, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API,
                        CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000);
  if (!left_out("zeroed")) apptracer::request_zeroed_activity_buffers();
  cuptiActivityRegisterCallbacks(give_buffer, drop_buffer);
  for (CUpti_ActivityKind kind : apptracer::traced_activity_kinds()) {
    if (!left_out(activity_part(kind))) cuptiActivityEnable(kind);
  }
  if (const char* graphs = std::getenv("BARE_GRAPH_TRACE"); graphs && *graphs == '1') {
    CUptiResult result = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_GRAPH_TRACE);
    std::fprintf(stderr, "bare_cupti_subscriber: graph trace %s (%d)\n",
                 result == CUPTI_SUCCESS ? "enabled" : "refused", static_cast<int>(result));
  }
  std::atexit(flush_at_exit);
}

}  // namespace

extern "C" __attribute__((visibility("default"))) void bare_ask_cupti_every_us(unsigned us) {
  ask_every_us = us;
  if (us && !asker_started.exchange(true)) std::thread(ask_cupti).detach();
}
