// Framework allocators' events (PyTorch's caching allocator, CuPy's memory
// pool) as records: the hot part, called on the allocating thread from
// inside the allocator, under its lock.
//
// It reads the clock and appends one fixed-size record to the calling
// thread's buffer, as a CUPTI callback does: no Python, torch or CUDA call,
// no lock of its own and no allocation (the buffer's own first use on a
// thread and its chunk hand-offs take the buffer's leaf mutex, never while
// calling out).
#pragma once

#include <cstdint>
#include <string>

#include "apptracer/records.h"
#include "buffer/record_buffers.h"
#include "buffer/string_table.h"

namespace apptracer::frameworks {

// Where events go once the tracer records, and where facts about the
// attachment go (the trace's meta table). Set once by inject/; every
// allocator is enabled again.
struct FrameworkSink {
  RecordBuffers* buffers = nullptr;
  uint64_t (*now_ns)() = nullptr;
  void (*set_meta)(const std::string& key, const std::string& value) = nullptr;
  StringTable* strings = nullptr;  // names of framework ranges; none: no ranges recorded
  // Framework ranges in which nothing else was recorded are kept too
  // (APPTRACER_FRAMEWORK_CONTEXT=all): every op, as a CPU-side op timeline.
  bool every_range = false;
  // 1 in this many of PyTorch's ops and backward nodes recorded (torch_ops.h).
  uint32_t op_sample_every = 1;
  // ... after this many were each recorded (torch_ops.h).
  uint32_t op_sample_after = 0;
  // APPTRACER_FRAMEWORK_CONTEXT's mode (base/config.h), which the Python
  // bootstrap asks for: whether to record modules, and ops. A string literal
  // (the sink is a global that must need no constructor).
  const char* framework_context = "off";
};
void start_recording(const FrameworkSink& sink);
bool recording();
// The sink, once recording() (framework_ranges.cpp appends through it).
const FrameworkSink& recording_sink();
// The meta hook, or a no-op before start_recording.
void set_meta(const std::string& key, const std::string& value);

// An allocator whose events did not match the CUDA allocations the tracer
// saw is refused: its later events are dropped where they happen.
bool allocator_enabled(SubAllocator allocator);
void refuse_allocator(SubAllocator allocator);

struct FrameworkEvent {
  SubAllocator allocator = SubAllocator::PytorchCaching;
  SubAllocationEvent event = SubAllocationEvent::Alloc;
  int32_t device = -1;
  uint64_t address = 0;
  uint64_t bytes = 0;
  uint64_t block_bytes = 0;
  uint64_t stream = 0;
  int64_t pool_id = 0;
};

// Appends the event stamped with the trace clock. False when nothing was
// recorded (not recording, or the allocator refused).
bool record_event(const FrameworkEvent& event);

// The allocator's name as meta keys use it: "pytorch", "cupy".
const char* meta_name(SubAllocator allocator);

}  // namespace apptracer::frameworks
