// The tracer's process-wide state and lifecycle (lifecycle.cpp): started once
// by whichever injection route fires first, finished once at exit.
#pragma once

#include <string>

#include "record_buffers.h"
#include "writer.h"

namespace apptracer {

RecordBuffers& record_buffers();
Writer& writer();

// Whether libcupti.so.13 was found and loaded (cupti_loader.cpp).
bool cupti_loaded();

// CUPTI callbacks (callbacks.cpp) and activity (activity.cpp).
// False when CUPTI is unavailable or taken by another tool; `why_not` says which.
bool subscribe_callbacks(std::string& why_not);
void unsubscribe_callbacks();
bool enable_activity();
// Unified-memory counters need the driver initialized: called when a context is created.
void enable_um_counters();
void flush_activity();

}  // namespace apptracer
