// One traced API callback in, records out: the api_calls record of the call,
// and whatever its handler says the call did.
#pragma once

#include <cupti.h>

#include "base/numa.h"
#include "translate/capture_context.h"

namespace apptracer {

// For an enabled runtime or driver callback (enter or exit site).
void on_api_callback(CaptureContext& ctx, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                     const CUpti_CallbackData* data);

// The correlation id of the outermost traced call in progress on this thread
// (what its records carry as correlation_id), 0 when none is: --exact names
// the launch a sanitizer callback fires inside.
uint32_t current_outer_correlation_id();
struct TracedFunction;

// The traced call in progress on this thread, for CUPTI callbacks that fire
// inside it (graph resource callbacks).
struct CallInProgress {
  const TracedFunction* function = nullptr;  // the outermost call; nullptr: none in progress
  uint32_t correlation_id = 0;               // its correlation id (what rows name)
};
CallInProgress call_in_progress();

// The pages of the destination of the copy in progress on this thread as its
// outermost call began (translate/copy_destination.h); {0, 0} when not probed.
PageTouch copy_destination_at_entry();

// The calls in progress on this thread were captured into a graph (a node was
// made where their work would have been): their handlers record no operation.
void mark_calls_captured();

}  // namespace apptracer
