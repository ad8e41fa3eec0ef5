// Capture: subscribing to CUPTI and handing what it reports to translation
// (translate/). The injected library (inject/) starts it and receives the
// few facts that belong in the trace's meta table.
#pragma once

#include <string>

#include "translate/capture_context.h"

namespace apptracer {

struct CaptureHooks {
  // A CUDA context was created: devices and driver versions can be read now.
  void (*context_created)() = nullptr;
  // A fact about the recording for the trace's meta table.
  void (*set_meta)(const std::string& key, const std::string& value) = nullptr;
  // Which unified-memory counters to record (apptracer/um_counter_groups.h;
  // "" for the default). Plain data, as every global the preloaded start
  // touches must be: it runs before other files' static constructors.
  const char* unified_memory = "";
};

// Subscribes to CUPTI and enables the traced callbacks. False when CUPTI is
// unavailable or taken by another tool; `why_not` says which in one line.
bool subscribe_callbacks(CaptureContext& ctx, const CaptureHooks& hooks, std::string& why_not);
void unsubscribe_callbacks();

// GPU activity (kernels, copies, memsets; unified-memory counters once a
// context exists). False when CUPTI refuses the activity buffers.
bool enable_activity(CaptureContext& ctx, const CaptureHooks& hooks);
void flush_activity();
// At the first context, or at once when attaching to a process whose
// contexts already exist: the unified-memory counters, and the pre-faulted
// activity buffers the first GPU operations will take (activity_buffer_pool.h;
// not earlier, so processes that never use CUDA do not pay for them).
void prepare_activity_for_contexts();
// Stops GPU activity collection (after an in-process capture ends), so the
// program pays for nothing more; what CUPTI still holds is flushed first.
void disable_activity();

}  // namespace apptracer
