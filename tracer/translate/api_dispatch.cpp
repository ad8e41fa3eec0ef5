// A runtime call that reaches a traced driver call fires both callbacks. The
// operation is described once, by the innermost call that describes it (the
// driver's, which sees real device addresses and launch arguments). The
// runtime call's first successful driver call is folded into the runtime
// call's own api_calls record (its name; its time is inside the runtime
// call's): one record per launch instead of two, which is what most of a
// trace is. Any further driver call, and a failed one, keeps a record of its
// own naming the runtime call it served (parent_correlation_id). The
// api_calls record comes after the operation's records, so it can carry the
// stream the handler found.
#include "translate/api_dispatch.h"

#include "translate/call_site.h"
#include "translate/copy_destination.h"

namespace apptracer {

namespace {

struct ThreadCallState {
  int depth = 0;  // traced API calls in progress on this thread
  const TracedFunction* outer_function = nullptr;
  uint32_t outer_correlation_id = 0;
  bool inner_call_emitted = false;  // a nested driver call described the operation
  bool captured = false;            // stream capture made a graph node of the outermost call
  const char* folded_driver_call = nullptr;  // the driver call folded into the outer call's record
  int64_t folded_stream = -1;                // the stream it named
  PageTouch destination;  // the outermost call's copy destination, probed at its entry
};

thread_local ThreadCallState call_state;

void on_enter(CaptureContext& ctx, const TracedFunction& function,
              const CUpti_CallbackData* data) {
  *data->correlationData = ctx.now_ns();
  if (call_state.depth == 0) {
    call_state.outer_function = &function;
    call_state.outer_correlation_id = data->correlationId;
    call_state.inner_call_emitted = false;
    call_state.captured = false;
    call_state.folded_driver_call = nullptr;
    call_state.folded_stream = -1;
    call_state.destination = probe_copy_destination(function, data->functionParams, ctx.allocations.regions());
  }
  ++call_state.depth;
}

// Called after the exiting call left call_state.depth: depth 1 means it ran
// directly inside the outermost call.
bool folds_into_outer_call(const TracedFunction& function, int return_code) {
  return call_state.depth == 1 && function.domain == CUPTI_CB_DOMAIN_DRIVER_API &&
         call_state.outer_function->domain == CUPTI_CB_DOMAIN_RUNTIME_API && return_code == 0 &&
         !call_state.folded_driver_call;
}

void on_exit(CaptureContext& ctx, const TracedFunction& function, const CUpti_CallbackData* data) {
  uint64_t end = ctx.now_ns();
  // An exit without its enter (we subscribed mid-call): nothing to pair it with.
  if (call_state.depth == 0) return;
  --call_state.depth;
  bool nested = call_state.depth > 0;
  CallSite call{ctx, function, data, *data->correlationData, end, call_state.outer_correlation_id};
  call.captured = call_state.captured;
  int return_code = data->functionReturnValue ? *static_cast<int*>(data->functionReturnValue) : 0;
  // A failed call did nothing to describe.
  if (return_code == 0) {
    if (function.domain == CUPTI_CB_DOMAIN_DRIVER_API) {
      function.handler(call);
      if (nested && call.emitted) call_state.inner_call_emitted = true;
    } else if (!call_state.inner_call_emitted) {
      function.handler(call);
    }
  }
  if (folds_into_outer_call(function, return_code)) {
    call_state.folded_driver_call = data->functionName;
    call_state.folded_stream = call.stream;
    return;
  }
  Record api{};
  api.type = RecordType::ApiCall;
  api.correlation_id = call.outer_correlation_id;
  api.own_correlation_id = data->correlationId;
  api.api.start_ns = call.start_ns;
  api.api.end_ns = end;
  // A runtime call whose driver call described the operation names the
  // stream that driver call named.
  api.api.stream = call.stream < 0 && !nested ? call_state.folded_stream : call.stream;
  api.api.parent_correlation_id = nested ? call.outer_correlation_id : 0;
  api.api.return_code = return_code;
  api.api.device = call.device();
  api.api.cbid = static_cast<uint16_t>(function.cbid);
  api.api.domain =
      function.domain == CUPTI_CB_DOMAIN_RUNTIME_API ? ApiDomain::Runtime : ApiDomain::Driver;
  api.api.name = data->functionName;
  api.api.driver_name = nested ? nullptr : call_state.folded_driver_call;
  ctx.buffers.append(api);
}

}  // namespace

void on_api_callback(CaptureContext& ctx, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                     const CUpti_CallbackData* data) {
  const TracedFunction* function = traced_function(domain, cbid);
  if (!function) return;
  if (data->callbackSite == CUPTI_API_ENTER) {
    on_enter(ctx, *function, data);
  } else {
    on_exit(ctx, *function, data);
  }
}

uint32_t current_outer_correlation_id() {
  return call_state.depth > 0 ? call_state.outer_correlation_id : 0;
}

CallInProgress call_in_progress() {
  if (call_state.depth == 0) return {};
  return {call_state.outer_function, call_state.outer_correlation_id};
}

// Handlers run after their call left the depth count; every outermost
// call's entry sets it anew.
PageTouch copy_destination_at_entry() { return call_state.destination; }

void mark_calls_captured() {
  if (call_state.depth > 0) call_state.captured = true;
}

}  // namespace apptracer
