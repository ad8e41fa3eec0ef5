// The handlers traced_functions.def names, declared from that list: one
// function per kind of call, reading its CUPTI parameter struct.
#pragma once

#include "translate/call_site.h"

namespace apptracer {

namespace runtime_calls {
#define APPTRACER_RUNTIME(name, op, handler, flags) void handler(CallSite& call);
#include "translate/traced_functions.def"
}  // namespace runtime_calls

namespace driver_calls {
#define APPTRACER_DRIVER(name, op, handler, flags) void handler(CallSite& call);
#include "translate/traced_functions.def"
}  // namespace driver_calls

}  // namespace apptracer
