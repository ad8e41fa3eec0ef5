// What the tracer asks CUPTI for besides the callbacks of its traced
// functions (translate/traced_functions.def): resource callbacks, activity
// kinds, unified-memory counters. Kept in one place so the benchmark's bare
// CUPTI subscriber enables exactly the same set (the floor we compare against).
#pragma once

#include <cupti.h>

#include <cstddef>
#include <utility>
#include <vector>

#include "apptracer/enums.h"

namespace apptracer {

template <typename T>
struct IdList {
  const T* ids;
  size_t count;
  const T* begin() const { return ids; }
  const T* end() const { return ids + count; }
};

IdList<CUpti_CallbackId> traced_resource_callbacks();
// CONCURRENT_KERNEL, never KERNEL: the latter serializes kernels.
IdList<CUpti_ActivityKind> traced_activity_kinds();

// Enables every traced runtime and driver callback and the resource
// callbacks for `subscriber`; returns how many could not be enabled, after
// calling `failed` for each.
int enable_traced_callbacks(CUpti_SubscriberHandle subscriber,
                            void (*failed)(CUpti_CallbackDomain, CUpti_CallbackId, CUptiResult));

// Configures and enables those counters, as far as this machine supports
// them. Needs an initialized driver (call it at the first context creation).
// One configuration call fails as a whole when any kind in it is unsupported
// (platform, device, GPUs without peer access), so each kind is tried alone
// first; the supported ones are then configured together, then enabled.
struct UmCounterSetup {
  std::vector<CUpti_ActivityUnifiedMemoryCounterKind> enabled;
  std::vector<std::pair<CUpti_ActivityUnifiedMemoryCounterKind, CUptiResult>> unsupported;
  CUptiResult enable_result = CUPTI_SUCCESS;  // of configuring the set and enabling the kind
};
// `kinds`: which counters (apptracer/um_counter_groups.h; its values are CUPTI's).
UmCounterSetup enable_traced_um_counters(const std::vector<UmCounterKind>& kinds);

// Tells CUPTI that the activity buffers it is given come zeroed
// (activity_buffer_pool.h), so it does not zero them in the program's
// threads. Before the buffer callbacks are registered.
CUptiResult request_zeroed_activity_buffers();

}  // namespace apptracer
