#include "frameworks/torch_allocator.h"

#include <dlfcn.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>

#include "apptracer/records.h"
#include "base/log.h"
#include "frameworks/sub_allocation_events.h"

namespace apptracer::frameworks {

namespace {

// The prefix of c10::CachingDeviceAllocator::TraceEntry that the tracker
// reads (torch 2.11; offsets measured with offsetof against its headers).
// Never touch what follows: a time union and two std::strings.
struct TorchTraceEntry {
  int32_t action;
  int8_t device;
  uint64_t address;
  void* context[2];  // std::shared_ptr<GatheredContext>
  uint64_t stream;   // the cudaStream_t
  uint64_t size;     // requested bytes; segments: the segment's size
  uint64_t pool_first;  // MempoolId_t
  uint64_t pool_second;
};
static_assert(offsetof(TorchTraceEntry, address) == 8);
static_assert(offsetof(TorchTraceEntry, stream) == 32);
static_assert(offsetof(TorchTraceEntry, size) == 40);
static_assert(offsetof(TorchTraceEntry, pool_first) == 48);

// Torch versions whose vtable and TraceEntry layout are known: the prefix of
// torch.__version__ and the byte offset of attachAllocatorTraceTracker in
// CUDAAllocator's vtable. 2.11.0+cu130: measured on the H100 (the pointer
// to member {353, 0}); the GPU test re-derives it from the installed headers.
struct KnownVersion {
  const char* prefix;
  long slot_offset;
};
constexpr KnownVersion kKnownVersions[] = {{"2.11.", 352}};

constexpr const char* kAllocatorSymbol = "_ZN3c104cuda20CUDACachingAllocator9allocatorE";

// torch's Action enum, stable since 2.1.
SubAllocationEvent event_of(int32_t action, bool& known) {
  known = true;
  switch (action) {
    case 0: return SubAllocationEvent::Alloc;
    case 1: return SubAllocationEvent::FreeRequested;
    case 2: return SubAllocationEvent::Free;
    case 3: return SubAllocationEvent::SegmentAlloc;
    case 4: return SubAllocationEvent::SegmentFree;
    case 5: return SubAllocationEvent::SegmentMap;
    case 6: return SubAllocationEvent::SegmentUnmap;
    default: known = false; return SubAllocationEvent::Alloc;
  }
}

// Called by torch on the allocating thread, under the allocator's lock.
void on_trace_entry(const TorchTraceEntry& entry) {
  // SNAPSHOT (7) and OOM (8) say nothing about blocks; anything else means
  // the layout is not what we think: stop listening.
  if (entry.action == 7 || entry.action == 8) return;
  bool known = false;
  SubAllocationEvent event = event_of(entry.action, known);
  if (!known || entry.device < 0) {
    refuse_allocator(SubAllocator::PytorchCaching);
    return;
  }
  FrameworkEvent e;
  e.allocator = SubAllocator::PytorchCaching;
  e.event = event;
  e.device = entry.device;
  e.address = entry.address;
  e.bytes = entry.size;
  e.stream = entry.stream;
  // Graph pools are {id, 0}, user pools {0, id}.
  e.pool_id = entry.pool_first ? static_cast<int64_t>(entry.pool_first)
                               : -static_cast<int64_t>(entry.pool_second);
  record_event(e);
}

std::atomic<bool> attached{false};

void report(AttachStatus status, const std::string& what) {
  if (status == AttachStatus::Attached) {
    log_debug("PyTorch caching allocator: {}", what);
  } else if (status == AttachStatus::OtherBackend) {
    log_info("PyTorch caching allocator: {}; each tensor is a CUDA allocation", what);
  } else {
    log_info("PyTorch caching allocator: {}; its tensors are not recorded (segments are)", what);
  }
  set_meta("sub_allocations.pytorch", what);
}

}  // namespace

long torch_attach_slot_offset(const std::string& torch_version) {
  for (const KnownVersion& known : kKnownVersions) {
    if (torch_version.rfind(known.prefix, 0) == 0) return known.slot_offset;
  }
  return -1;
}

AttachStatus attach_torch_tracker(const std::string& torch_version, const std::string& backend) {
  if (!recording()) return AttachStatus::NotRecording;
  if (attached.load()) return AttachStatus::AlreadyAttached;
  if (backend != "native") {
    report(AttachStatus::OtherBackend, "not attached: torch's allocator backend is '" + backend +
                                           "', not the caching allocator");
    return AttachStatus::OtherBackend;
  }
  long offset = torch_attach_slot_offset(torch_version);
  if (offset < 0) {
    report(AttachStatus::UnknownVersion,
           "not attached: torch " + torch_version + " is not a version apptracer knows");
    return AttachStatus::UnknownVersion;
  }
  void* library = dlopen("libc10_cuda.so", RTLD_NOW | RTLD_NOLOAD);
  auto* holder = library ? static_cast<std::atomic<void*>*>(dlsym(library, kAllocatorSymbol))
                         : nullptr;
  void* allocator = holder ? holder->load() : nullptr;
  if (!allocator) {
    report(AttachStatus::NoAllocator, "not attached: no CUDA caching allocator in libc10_cuda.so");
    return AttachStatus::NoAllocator;
  }
  void** vtable = *static_cast<void***>(allocator);
  void* slot = vtable[offset / static_cast<long>(sizeof(void*))];
  Dl_info where{};
  if (!dladdr(slot, &where) || !where.dli_fname || !std::strstr(where.dli_fname, "libc10_cuda")) {
    report(AttachStatus::UnexpectedLayout,
           "not attached: torch " + torch_version + "'s allocator is not laid out as expected");
    return AttachStatus::UnexpectedLayout;
  }
  // attachAllocatorTraceTracker(std::function<void(const TraceEntry&)>): the
  // by-value argument is passed by address (Itanium C++ ABI), and a
  // std::function's layout does not depend on its signature.
  using Tracker = std::function<void(const TorchTraceEntry&)>;
  using AttachFunction = void (*)(void* self, Tracker* tracker);
  Tracker tracker(&on_trace_entry);
  // Once only: a tracker cannot be detached.
  if (attached.exchange(true)) return AttachStatus::AlreadyAttached;
  try {
    reinterpret_cast<AttachFunction>(slot)(allocator, &tracker);
  } catch (...) {
    report(AttachStatus::Failed, "not attached: torch refused the trace tracker");
    return AttachStatus::Failed;
  }
  report(AttachStatus::Attached, "attached (torch " + torch_version + ")");
  return AttachStatus::Attached;
}

}  // namespace apptracer::frameworks
