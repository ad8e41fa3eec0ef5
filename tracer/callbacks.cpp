// CUPTI callbacks: one API call in, one api_calls record out, plus whatever
// the call did (translated in runtime_calls.cpp / driver_calls.cpp).
//
// Only the callback ids we translate are enabled: every enabled id costs time
// on every call (GPU.md). A runtime call that reaches a traced driver call
// fires both callbacks; the operation is described once, by the innermost
// call that describes it, and the driver call's row names the runtime call it
// served (parent_correlation_id).
#include <cupti.h>
#include <dlfcn.h>

#include <string>

#include "clock.h"
#include "driver.h"
#include "emit.h"
#include "log.h"
#include "traced_callbacks.h"
#include "tracer.h"

namespace apptracer {

namespace {

CUpti_SubscriberHandle subscriber = nullptr;

struct ThreadCallState {
  int depth = 0;                  // traced API calls in progress on this thread
  uint32_t outer_correlation_id = 0;
  bool inner_call_emitted = false;  // a nested driver call described the operation
};

thread_local ThreadCallState call_state;

void on_api_enter(const CUpti_CallbackData* data) {
  *data->correlationData = now_ns();
  if (call_state.depth == 0) {
    call_state.outer_correlation_id = data->correlationId;
    call_state.inner_call_emitted = false;
  }
  ++call_state.depth;
}

void on_api_exit(ApiDomain domain, CUpti_CallbackId cbid, const CUpti_CallbackData* data) {
  uint64_t end = now_ns();
  --call_state.depth;
  bool nested = call_state.depth > 0;
  CallSite call{data, *data->correlationData, end, call_state.outer_correlation_id};

  int return_code = data->functionReturnValue ? *static_cast<int*>(data->functionReturnValue) : 0;
  Record api{};
  api.type = RecordType::ApiCall;
  api.correlation_id = call.outer_correlation_id;
  api.own_correlation_id = data->correlationId;
  api.api.start_ns = call.start_ns;
  api.api.end_ns = end;
  api.api.parent_correlation_id = nested ? call.outer_correlation_id : 0;
  api.api.return_code = return_code;
  api.api.device = -1;
  api.api.cbid = static_cast<uint16_t>(cbid);
  api.api.domain = domain;
  api.api.name = data->functionName;
  record_buffers().append(api);

  if (return_code != 0) return;  // a failed call did nothing to describe
  if (domain == ApiDomain::Driver) {
    translate_driver_call(call, cbid);
    if (nested && call.emitted) call_state.inner_call_emitted = true;
  } else if (!call_state.inner_call_emitted) {
    translate_runtime_call(call, cbid);
  }
}

// The runtime's version is only visible when the program loads cudart as a
// shared library (PyTorch, CuPy); nvcc links it statically by default.
std::string runtime_version() {
  using GetVersion = int (*)(int*);
  auto get = reinterpret_cast<GetVersion>(dlsym(RTLD_DEFAULT, "cudaRuntimeGetVersion"));
  int version = 0;
  if (get && get(&version) == 0) return std::to_string(version);
  return "unknown (cudart linked statically, or driver API only)";
}

void on_resource(CUpti_CallbackId cbid) {
  if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_CREATED) {
    for (const DeviceInfo& device : driver_devices()) writer().add_device(device);
    writer().set_meta("cuda_driver_version", std::to_string(driver_version()));
    writer().set_meta("cuda_runtime_version", runtime_version());
    enable_um_counters();
  }
}

void CUPTIAPI on_callback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                          const void* data) {
  if (record_buffers().closed()) return;
  switch (domain) {
    case CUPTI_CB_DOMAIN_RUNTIME_API:
    case CUPTI_CB_DOMAIN_DRIVER_API: {
      auto* call = static_cast<const CUpti_CallbackData*>(data);
      ApiDomain api_domain =
          domain == CUPTI_CB_DOMAIN_RUNTIME_API ? ApiDomain::Runtime : ApiDomain::Driver;
      if (call->callbackSite == CUPTI_API_ENTER) {
        on_api_enter(call);
      } else {
        on_api_exit(api_domain, cbid, call);
      }
      break;
    }
    case CUPTI_CB_DOMAIN_RESOURCE:
      on_resource(cbid);
      break;
    default:
      break;
  }
}

void enable_ids(CUpti_CallbackDomain domain, IdList<CUpti_CallbackId> ids) {
  for (CUpti_CallbackId id : ids) {
    CUptiResult result = cuptiEnableCallback(1, subscriber, domain, id);
    if (result != CUPTI_SUCCESS) {
      const char* message = nullptr;
      cuptiGetResultString(result, &message);
      log_warn("cannot enable CUPTI callback {} of domain {}: {}", id, static_cast<int>(domain),
               message ? message : "?");
    }
  }
}

}  // namespace

bool subscribe_callbacks(std::string& why_not) {
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
  enable_ids(CUPTI_CB_DOMAIN_RUNTIME_API, traced_runtime_callbacks());
  enable_ids(CUPTI_CB_DOMAIN_DRIVER_API, traced_driver_callbacks());
  enable_ids(CUPTI_CB_DOMAIN_RESOURCE, traced_resource_callbacks());
  return true;
}

void unsubscribe_callbacks() {
  if (subscriber) {
    cuptiUnsubscribe(subscriber);
    subscriber = nullptr;
  }
}

}  // namespace apptracer
