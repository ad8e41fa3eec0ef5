// CUPTI callbacks: each traced API call goes to translation; a new context
// brings devices, versions and the unified-memory counters.
//
// Only the callback ids of traced functions are enabled: every enabled id
// costs time on every call of its function (about 0.1-0.2 us per launch each,
// measured on an H100; docs/architecture.md, hot path).
#include <cupti.h>

#include "base/driver.h"
#include "base/log.h"
#include "base/inside_tracer.h"
#include "base/self_cost.h"
#include "capture/capture.h"
#include "capture/cupti_requests.h"
#include "base/cupti_loader.h"
#include "translate/api_dispatch.h"
#include "translate/graph_callbacks.h"

namespace apptracer {

namespace {

CUpti_SubscriberHandle subscriber = nullptr;
CaptureContext* context = nullptr;
CaptureHooks hooks;

void CUPTIAPI on_callback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                          const void* data) {
  if (context->buffers.closed()) return;
  // What the bookkeeping below allocates (a new handle's cached name, a
  // thread's first buffer) is ours, not the program's.
  InsideTracer inside;
  switch (domain) {
    case CUPTI_CB_DOMAIN_RUNTIME_API:
    case CUPTI_CB_DOMAIN_DRIVER_API: {
      self_cost::Timer timer(self_cost::Site::ApiCallback);
      on_api_callback(*context, domain, cbid, static_cast<const CUpti_CallbackData*>(data));
      break;
    }
    case CUPTI_CB_DOMAIN_RESOURCE:
      if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_CREATED) {
        if (hooks.context_created) hooks.context_created();
        prepare_activity_for_contexts();
      } else if (cbid == CUPTI_CBID_RESOURCE_MODULE_UNLOAD_STARTING) {
        context->cuda.forget_functions();
      } else if (is_graph_callback(cbid)) {
        const auto* resource = static_cast<const CUpti_ResourceData*>(data);
        on_graph_callback(*context, cbid,
                          *static_cast<const CUpti_GraphData*>(resource->resourceDescriptor));
      }
      break;
    default:
      break;
  }
}

void report_unenabled(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, CUptiResult result) {
  const char* message = nullptr;
  cuptiGetResultString(result, &message);
  log_warn("cannot enable CUPTI callback {} of domain {}: {}", cbid, static_cast<int>(domain),
           message ? message : "?");
}

}  // namespace

bool subscribe_callbacks(CaptureContext& ctx, const CaptureHooks& capture_hooks,
                         std::string& why_not) {
  context = &ctx;
  hooks = capture_hooks;
  char other[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN] = {};
  CUpti_SubscriberParams params{};
  params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
  params.subscriberName = "apptracer";
  params.oldSubscriberName = other;
  params.oldSubscriberSize = sizeof other;
  CUptiResult result = cuptiSubscribe_v2(&subscriber, on_callback, nullptr, &params);
  if (result == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
    why_not = std::string("CUPTI is already in use by ") + (other[0] ? other : "another tool");
    return false;
  }
  if (result != CUPTI_SUCCESS) {
    if (!driver_present()) {
      why_not = "no CUDA driver on this machine";
    } else if (!cupti_loaded()) {
      why_not = "CUPTI (libcupti.so.13) not found; add the CUDA toolkit's lib64 to LD_LIBRARY_PATH";
    } else {
      const char* message = nullptr;
      cuptiGetResultString(result, &message);
      why_not = std::string("CUPTI unavailable (") + (message ? message : "?") + ")";
    }
    return false;
  }
  enable_traced_callbacks(subscriber, report_unenabled);
  return true;
}

void unsubscribe_callbacks() {
  if (subscriber) {
    cuptiUnsubscribe(subscriber);
    subscriber = nullptr;
  }
}

}  // namespace apptracer
