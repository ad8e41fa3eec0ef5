#include "translate/traced_function.h"

namespace apptracer {

const std::vector<TracedCallback>& traced_callbacks() {
  static const auto* callbacks = new std::vector<TracedCallback>{
#define APPTRACER_RUNTIME(name, op, handler, flags) \
  {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_##name},
#define APPTRACER_DRIVER(name, op, handler, flags) \
  {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_##name},
#include "translate/traced_functions.def"
  };
  return *callbacks;
}

}  // namespace apptracer
