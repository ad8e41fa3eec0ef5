// One traced API callback in, records out: the api_calls record of the call,
// and whatever its handler says the call did.
#pragma once

#include <cupti.h>

#include "translate/capture_context.h"

namespace apptracer {

// For an enabled runtime or driver callback (enter or exit site).
void on_api_callback(CaptureContext& ctx, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                     const CUpti_CallbackData* data);

// The correlation id of the outermost traced call in progress on this thread
// (what its records carry as correlation_id), 0 when none is: --exact names
// the launch a sanitizer callback fires inside.
uint32_t current_outer_correlation_id();

}  // namespace apptracer
