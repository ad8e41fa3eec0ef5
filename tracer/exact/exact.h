// --exact: what each kernel launch really read and wrote, from the GPU
// itself, through the Compute Sanitizer's patching API (docs/tracing.md, exact mode).
// Nothing of it runs unless the tracer is started in exact mode: the
// sanitizer library is loaded then, and only then.
//
// Per launch: a slot of GPU memory (slot_layout.h) that the device patch
// (exact_patch.cu) fills; read back lazily (slot_pool.h); decoded into byte
// ranges (slot_decoder.h) that become ExactLaunch / ExactIntervals records.
#pragma once

#include <cstdint>
#include <string>

#include "buffer/allocation_registry.h"
#include "buffer/record_buffers.h"
#include "buffer/string_table.h"
#include "exact/slot_pool.h"

namespace apptracer::exact {

struct ExactOptions {
  // False in a sanitizer-only run (no CUPTI): allocations then come from the
  // sanitizer's resource callbacks.
  bool with_capture = true;
  PoolOptions pool;
};

struct ExactHooks {
  RecordBuffers& buffers;
  StringTable& strings;
  AllocationRegistry& allocations;
  uint64_t (*now_ns)();
  // The outermost traced API call on this thread (what kernels rows name), 0 when none.
  uint32_t (*current_correlation_id)();
  void (*set_meta)(const std::string& key, const std::string& value);
};

// Loads the sanitizer and subscribes. False when exact mode cannot run here;
// `why_not` says why in one line (the program then runs in normal mode).
bool start_exact(const ExactOptions& options, const ExactHooks& hooks, std::string& why_not);

// Reads back every launch still in flight (at exit, before the trace is finished).
void finish_exact();

}  // namespace apptracer::exact
