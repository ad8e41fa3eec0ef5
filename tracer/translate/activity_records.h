// CUPTI activity records -> records: GPU start/end of kernels, copies and
// memsets, and unified-memory counters. Called for each record of a completed
// activity buffer, on the thread CUPTI returns it on (several at once in
// CUDA 13): nothing here is shared between threads but the string table.
#pragma once

#include <cupti.h>

#include "translate/capture_context.h"

namespace apptracer {

// Appends the record(s) one activity record becomes; ignores kinds we do not record.
void convert_activity(CaptureContext& ctx, const CUpti_Activity& activity);

}  // namespace apptracer
