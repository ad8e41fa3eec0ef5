// The tracer's process-wide state and lifecycle (lifecycle.cpp): started once
// by whichever injection route fires first, finished once at exit.
#pragma once

#include "record_buffers.h"
#include "writer.h"

namespace apptracer {

RecordBuffers& record_buffers();
Writer& writer();

// Whether libcupti.so.13 was found and loaded (cupti_loader.cpp).
bool cupti_loaded();

// CUPTI callbacks (callbacks.cpp) and activity (activity.cpp).
bool subscribe_callbacks();  // false: CUPTI unavailable or taken by another tool
void unsubscribe_callbacks();
bool enable_activity();
void flush_activity();

}  // namespace apptracer
