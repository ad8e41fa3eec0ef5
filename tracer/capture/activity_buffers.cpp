// CUPTI activity buffers: CUPTI fills buffers we hand it with GPU start/end
// of kernels, copies and memsets and unified-memory counters, and gives them
// back full (or on flush), possibly on several threads at once in CUDA 13.
// Each returned buffer is converted (translate/activity_records.cpp) on the
// thread that returns it, into that thread's own record buffer. The buffers
// themselves come from activity_buffer_pool.h.
#include <cupti.h>

#include <algorithm>
#include <mutex>
#include <string>
#include <vector>

#include "base/inside_tracer.h"
#include "base/self_cost.h"
#include "apptracer/um_counter_groups.h"
#include "base/log.h"
#include "capture/activity_buffer_pool.h"
#include "capture/capture.h"
#include "capture/cupti_requests.h"
#include "translate/activity_records.h"

namespace apptracer {

namespace {

// Two: the program's first thread to use the GPU, and the next buffer it
// needs while CUPTI still holds its first.
constexpr int kPrefilledBuffers = 2;

ActivityBufferPool buffer_pool;
CaptureContext* capture_context = nullptr;
CaptureHooks activity_hooks;
bool activity_registered = false;

void CUPTIAPI on_buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = buffer_pool.take();
  *size = *buffer ? ActivityBufferPool::kBufferBytes : 0;
  *max_records = 0;
}

void CUPTIAPI on_buffer_completed(CUcontext context, uint32_t stream_id, uint8_t* buffer, size_t,
                                  size_t valid_bytes) {
  InsideTracer inside;
  self_cost::Timer timer(self_cost::Site::ActivityBuffer);
  CUpti_Activity* record = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid_bytes, &record) == CUPTI_SUCCESS) {
    convert_activity(*capture_context, *record);
  }
  size_t dropped = 0;
  if (cuptiActivityGetNumDroppedRecords(context, stream_id, &dropped) == CUPTI_SUCCESS &&
      dropped > 0) {
    log_warn("CUPTI dropped {} activity records (GPU times of some operations are missing)",
             dropped);
  }
  buffer_pool.give_back(buffer, valid_bytes);
}

std::string cupti_message(CUptiResult result) {
  const char* message = nullptr;
  cuptiGetResultString(result, &message);
  return message ? message : "?";
}

std::string joined(const std::vector<std::string>& items) {
  if (items.empty()) return "none";
  std::string text;
  for (const std::string& item : items) text += (text.empty() ? "" : ", ") + item;
  return text;
}

// Which counters this machine gives is said once in the log and in meta.
void configure_and_enable_um_counters() {
  std::optional<std::vector<UmCounterKind>> kinds = um_counter_kinds(activity_hooks.unified_memory);
  if (!kinds) {
    log_warn("unified memory '{}' is not a list of {}; recording the default",
             activity_hooks.unified_memory, um_counter_group_names());
    kinds = um_counter_kinds("default");
  }
  UmCounterSetup setup = enable_traced_um_counters(*kinds);
  auto name = [](CUpti_ActivityUnifiedMemoryCounterKind kind) {
    return std::string(to_string(static_cast<UmCounterKind>(kind)));
  };
  std::vector<std::string> enabled_names, unsupported_names;
  for (auto kind : setup.enabled) enabled_names.push_back(name(kind));
  for (auto [kind, result] : setup.unsupported) {
    std::string why = cupti_message(result);
    log_info("unified-memory counter '{}' is not supported here ({}); not recorded", name(kind), why);
    unsupported_names.push_back(name(kind) + " (" + why + ")");
  }
  if (setup.enable_result != CUPTI_SUCCESS) {
    log_warn("cannot enable unified-memory counters: {}", cupti_message(setup.enable_result));
    unsupported_names.insert(unsupported_names.end(), enabled_names.begin(), enabled_names.end());
    enabled_names.clear();
  }
  if (activity_hooks.set_meta) {
    std::vector<std::string> not_asked;
    std::vector<UmCounterKind> every = *um_counter_kinds("all");
    for (UmCounterKind kind : every) {
      if (std::find(kinds->begin(), kinds->end(), kind) == kinds->end()) not_asked.emplace_back(to_string(kind));
    }
    activity_hooks.set_meta("um_counters", "enabled: " + joined(enabled_names) +
                                               "; unsupported: " + joined(unsupported_names) +
                                               "; not asked for: " + joined(not_asked));
  }
}

}  // namespace

bool enable_activity(CaptureContext& ctx, const CaptureHooks& hooks) {
  capture_context = &ctx;
  activity_hooks = hooks;
  if (CUptiResult result = request_zeroed_activity_buffers(); result != CUPTI_SUCCESS) {
    log_info("CUPTI zeroes each activity buffer itself ({})", cupti_message(result));
  }
  if (cuptiActivityRegisterCallbacks(on_buffer_requested, on_buffer_completed) != CUPTI_SUCCESS) {
    log_warn("cannot register CUPTI activity buffers; GPU times will be missing");
    return false;
  }
  activity_registered = true;
  for (CUpti_ActivityKind kind : traced_activity_kinds()) {
    CUptiResult result = cuptiActivityEnable(kind);
    if (result != CUPTI_SUCCESS) {
      log_warn("cannot enable CUPTI activity kind {}: {}", static_cast<int>(kind),
               cupti_message(result));
    }
  }
  return true;
}

// Unified-memory counters need an initialized driver: at the first context.
void prepare_activity_for_contexts() {
  static std::once_flag once;
  if (!activity_registered) return;
  std::call_once(once, [] {
    buffer_pool.prefill(kPrefilledBuffers);
    configure_and_enable_um_counters();
  });
}

void flush_activity() { cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED); }

void disable_activity() {
  if (!activity_registered) return;
  flush_activity();
  for (CUpti_ActivityKind kind : traced_activity_kinds()) cuptiActivityDisable(kind);
}

}  // namespace apptracer
