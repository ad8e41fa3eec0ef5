#include "translate/traced_function.h"

#include <array>

#include "translate/handlers.h"

namespace apptracer {

namespace runtime_calls {
void call_only(CallSite&) {}
}  // namespace runtime_calls
namespace driver_calls {
void call_only(CallSite&) {}
}  // namespace driver_calls

// Never destroyed: CUDA calls (and their callbacks) can come from exit handlers.
const std::vector<TracedFunction>& traced_functions() {
  static const auto* functions = new std::vector<TracedFunction>{
#define APPTRACER_RUNTIME(name, op, handler, flags)                                   \
  {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_##name, #name, OpKind::op, \
   runtime_calls::handler, flags},
#define APPTRACER_DRIVER(name, op, handler, flags)                                  \
  {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_##name, #name, OpKind::op, \
   driver_calls::handler, flags},
#include "translate/traced_functions.def"
  };
  return *functions;
}

namespace {

// Callback id -> entry, one array per domain: a lookup per API call.
struct Lookup {
  std::array<const TracedFunction*, CUPTI_RUNTIME_TRACE_CBID_SIZE> runtime{};
  std::array<const TracedFunction*, CUPTI_DRIVER_TRACE_CBID_SIZE> driver{};
};

const Lookup& lookup() {
  static const Lookup* table = [] {
    auto* t = new Lookup;
    for (const TracedFunction& f : traced_functions()) {
      if (f.domain == CUPTI_CB_DOMAIN_RUNTIME_API) t->runtime[f.cbid] = &f;
      if (f.domain == CUPTI_CB_DOMAIN_DRIVER_API) t->driver[f.cbid] = &f;
    }
    return t;
  }();
  return *table;
}

}  // namespace

const TracedFunction* traced_function(CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  const Lookup& t = lookup();
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
    return cbid < t.runtime.size() ? t.runtime[cbid] : nullptr;
  }
  if (domain == CUPTI_CB_DOMAIN_DRIVER_API) {
    return cbid < t.driver.size() ? t.driver[cbid] : nullptr;
  }
  return nullptr;
}

}  // namespace apptracer
