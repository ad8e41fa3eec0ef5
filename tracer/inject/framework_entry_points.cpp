// The C functions the Python bootstrap (frameworks/apptracer-python/
// sitecustomize.py) calls through ctypes, exported from libapptracer.so.
// Each returns 0 when it did what it was asked, else a reason (below).
#include <cstdint>
#include <string>

#include "frameworks/framework_ranges.h"
#include "frameworks/sub_allocation_events.h"
#include "frameworks/torch_allocator.h"
#include "frameworks/torch_ops.h"

using apptracer::FrameworkRangeKind;
using apptracer::SubAllocationEvent;
using apptracer::SubAllocator;

// Attaches the trace tracker to PyTorch's CUDA caching allocator, once
// torch's CUDA is initialised (torch.__version__, and the allocator backend
// torch.cuda.memory.get_allocator_backend() names). Returns a
// frameworks::AttachStatus: 0 attached, 1 not recording, 2 unknown torch
// version, 3 no allocator, 4 unexpected layout, 5 already attached, 6 torch
// refused, 7 another allocator backend.
extern "C" __attribute__((visibility("default"))) int apptracer_torch_attach(
    const char* torch_version, const char* backend) {
  return static_cast<int>(apptracer::frameworks::attach_torch_tracker(
      torch_version ? torch_version : "", backend ? backend : ""));
}

// CuPy's memory hooks are about to be entered: 0 when events will be
// recorded, 1 when the tracer is not recording (leave CuPy alone).
extern "C" __attribute__((visibility("default"))) int apptracer_cupy_attach() {
  if (!apptracer::frameworks::recording()) return 1;
  apptracer::frameworks::set_meta("sub_allocations.cupy",
                                  "memory hooks entered (every Python thread)");
  return 0;
}

// One event of a framework allocator without a C++ hook (CuPy's pool):
// `allocator` a sub_allocator value (2: cupy memory pool), `event` 0 alloc,
// 2 free (back in the pool). Returns 0 when recorded, 1 when not recording
// or refused, 2 for values out of range.
extern "C" __attribute__((visibility("default"))) int apptracer_sub_allocation_event(
    int allocator, int event, int device, uint64_t address, uint64_t bytes, uint64_t block_bytes,
    uint64_t stream) {
  if (allocator != static_cast<int>(SubAllocator::PytorchCaching) &&
      allocator != static_cast<int>(SubAllocator::CupyPool))
    return 2;
  if (event < 0 || event > static_cast<int>(SubAllocationEvent::SegmentUnmap)) return 2;
  apptracer::frameworks::FrameworkEvent e;
  e.allocator = static_cast<SubAllocator>(allocator);
  e.event = static_cast<SubAllocationEvent>(event);
  e.device = device;
  e.address = address;
  e.bytes = bytes;
  e.block_bytes = block_bytes;
  e.stream = stream;
  return apptracer::frameworks::record_event(e) ? 0 : 1;
}

// Registers RecordFunction callbacks with the process's torch, so that its
// ops are recorded as framework ranges (torch.__version__ given). Returns a
// frameworks::OpsAttachStatus: 0 attached, 1 not recording, 2 unknown torch
// version, 3 no torch, 5 already attached, 6 torch refused.
extern "C" __attribute__((visibility("default"))) int apptracer_torch_ops_attach(
    const char* torch_version) {
  return static_cast<int>(
      apptracer::frameworks::attach_torch_ops(torch_version ? torch_version : ""));
}

// APPTRACER_FRAMEWORK_CONTEXT's mode, its default where unset: off, modules,
// sampled, on or all ("off" when not recording). The bootstrap records
// modules unless "off", and attaches the op callbacks unless "modules" too.
extern "C" __attribute__((visibility("default"))) const char* apptracer_framework_context() {
  if (!apptracer::frameworks::recording()) return "off";
  return apptracer::frameworks::recording_sink().framework_context;
}

// The id of a framework range's name (a module's dotted path), interned once
// by the caller and passed to apptracer_framework_push; 0 when not recording.
extern "C" __attribute__((visibility("default"))) uint32_t apptracer_framework_name(
    const char* name) {
  return apptracer::frameworks::range_name(name ? name : "");
}

// A framework range opens or closes on the calling thread: `kind` a
// framework_range_kind value (1 module, 2 op, 3 backward, 4 scope); a pop
// closes the innermost range open (framework_ranges.h says which are
// recorded). Returns 0 when recording, 1 when not, 2 for a kind out of range.
extern "C" __attribute__((visibility("default"))) int apptracer_framework_push(int kind,
                                                                              uint32_t name_id) {
  if (kind < static_cast<int>(FrameworkRangeKind::Module) ||
      kind > static_cast<int>(FrameworkRangeKind::Scope))
    return 2;
  if (!apptracer::frameworks::ranges_recording()) return 1;
  apptracer::frameworks::open_range(static_cast<FrameworkRangeKind>(kind), name_id);
  return 0;
}

extern "C" __attribute__((visibility("default"))) int apptracer_framework_pop(int kind) {
  if (kind < static_cast<int>(FrameworkRangeKind::Module) ||
      kind > static_cast<int>(FrameworkRangeKind::Scope))
    return 2;
  if (!apptracer::frameworks::ranges_recording()) return 1;
  apptracer::frameworks::close_range();
  return 0;
}
