// One traced API callback in, records out: the api_calls record of the call,
// and whatever its handler says the call did.
#pragma once

#include <cupti.h>

#include "translate/capture_context.h"

namespace apptracer {

// For an enabled runtime or driver callback (enter or exit site).
void on_api_callback(CaptureContext& ctx, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                     const CUpti_CallbackData* data);

}  // namespace apptracer
