#include "emit.h"

#include <cupti_activity.h>

#include <mutex>
#include <unordered_map>

#include "allocation_registry.h"
#include "driver.h"
#include "record_buffers.h"
#include "string_table.h"
#include "tracer.h"

namespace apptracer {

namespace {

Record make_record(const CallSite& call, RecordType type) {
  Record r{};
  r.type = type;
  r.correlation_id = call.outer_correlation_id;
  r.own_correlation_id = call.data->correlationId;
  return r;
}

void append(CallSite& call, Record& r) {
  record_buffers().append(r);
  call.emitted = true;
}

int32_t device_of(const CallSite& call) {
  uint32_t device = 0;
  if (call.data->context && cuptiGetDeviceId(call.data->context, &device) == CUPTI_SUCCESS) {
    return static_cast<int32_t>(device);
  }
  return -1;
}

bool is_host_kind(AllocKind kind) {
  return memory_kind_of(kind) == MemoryKind::Pinned || kind == AllocKind::PageableHost;
}

int64_t stream_id(const CallSite& call, const void* stream, bool per_thread_stream) {
  uint32_t id = 0;
  if (call.data->context &&
      cuptiGetStreamIdEx(call.data->context, static_cast<CUstream>(const_cast<void*>(stream)),
                         per_thread_stream, &id) == CUPTI_SUCCESS) {
    return id;
  }
  return -1;
}

// Kernel names by function handle. A handle is resolved once per process;
// launches after that cost one lookup in the calling thread's cache.
uint32_t kernel_name_id(const CallSite& call, const void* function) {
  thread_local std::unordered_map<const void*, uint32_t> cache;
  auto hit = cache.find(function);
  if (hit != cache.end()) return hit->second;
  static std::mutex shared_mutex;
  static auto* shared = new std::unordered_map<const void*, uint32_t>;
  uint32_t id = 0;
  {
    std::lock_guard<std::mutex> lock(shared_mutex);
    auto known = shared->find(function);
    if (known != shared->end()) {
      id = known->second;
    } else {
      const char* name = call.data->symbolName;
      std::string resolved = name && *name ? name : driver_function_name(function);
      id = resolved.empty() ? 0 : strings().intern(resolved);
      (*shared)[function] = id;
    }
  }
  cache[function] = id;
  return id;
}

}  // namespace

void emit_allocation(CallSite& call, uint64_t address, uint64_t bytes, AllocKind kind,
                     uint32_t flags, uint64_t pitch) {
  Record r = make_record(call, RecordType::Allocation);
  int32_t device = is_host_kind(kind) ? -1 : device_of(call);
  r.allocation.alloc_id = allocations().add(address, bytes, kind, device, call.end_ns);
  r.allocation.address = address;
  r.allocation.bytes = bytes;
  r.allocation.pitch = pitch;
  r.allocation.ns = call.end_ns;
  r.allocation.flags = flags;
  r.allocation.device = device;
  r.allocation.kind = kind;
  append(call, r);
}

void emit_unresolvable_allocation(CallSite& call, AllocKind kind, uint64_t key, uint64_t address,
                                  uint64_t bytes, uint32_t flags) {
  Record r = make_record(call, RecordType::Allocation);
  r.allocation.alloc_id = allocations().add_unresolvable(kind, key, call.end_ns);
  r.allocation.address = address;
  r.allocation.bytes = bytes;
  r.allocation.ns = call.end_ns;
  r.allocation.flags = flags;
  r.allocation.device = device_of(call);
  r.allocation.kind = kind;
  append(call, r);
}

void emit_free(CallSite& call, uint64_t address) {
  if (address == 0) return;
  std::optional<AllocationInfo> freed = allocations().remove(address, call.start_ns);
  if (!freed) return;
  Record r = make_record(call, RecordType::Free);
  r.free.alloc_id = freed->id;
  r.free.ns = call.start_ns;
  append(call, r);
}

void emit_unresolvable_free(CallSite& call, AllocKind kind, uint64_t key) {
  std::optional<uint64_t> id = allocations().remove_unresolvable(kind, key);
  if (!id) return;
  Record r = make_record(call, RecordType::Free);
  r.free.alloc_id = *id;
  r.free.ns = call.start_ns;
  append(call, r);
}

void emit_memcpy(CallSite& call, const MemcpyRecord& copy) {
  Record r = make_record(call, RecordType::Memcpy);
  r.memcpy = copy;
  r.memcpy.api_start_ns = call.start_ns;
  append(call, r);
}

void emit_memset(CallSite& call, const MemsetRecord& set) {
  Record r = make_record(call, RecordType::Memset);
  r.memset = set;
  r.memset.api_start_ns = call.start_ns;
  append(call, r);
}

void emit_kernel(CallSite& call, const void* function, const uint32_t grid[3],
                 const uint32_t block[3], uint32_t dynamic_shared_bytes, LaunchKind kind) {
  Record r = make_record(call, RecordType::Kernel);
  KernelRecord& k = r.kernel;
  k.function_handle = reinterpret_cast<uint64_t>(function);
  k.api_start_ns = call.start_ns;
  k.name_id = kernel_name_id(call, function);
  for (int i = 0; i < 3; ++i) {
    k.grid[i] = grid[i];
    k.block[i] = block[i];
  }
  k.dynamic_shared_bytes = dynamic_shared_bytes;
  k.device = -1;  // the activity record says which device ran it
  k.launch_kind = kind;
  append(call, r);
}

void emit_sync(CallSite& call, SyncKind kind, const void* stream, uint64_t event_handle,
               bool per_thread_stream) {
  Record r = make_record(call, RecordType::Sync);
  r.sync.start_ns = call.start_ns;
  r.sync.end_ns = call.end_ns;
  r.sync.event_handle = event_handle;
  r.sync.stream = kind == SyncKind::Stream ? stream_id(call, stream, per_thread_stream) : -1;
  r.sync.device = device_of(call);
  r.sync.kind = kind;
  append(call, r);
}

void emit_stream_event(CallSite& call, StreamEventKind kind, const void* event,
                       const void* stream, bool per_thread_stream) {
  Record r = make_record(call, RecordType::StreamEvent);
  r.stream_event.ns = call.start_ns;
  r.stream_event.event_handle = reinterpret_cast<uint64_t>(event);
  r.stream_event.stream = stream_id(call, stream, per_thread_stream);
  r.stream_event.device = device_of(call);
  r.stream_event.kind = kind;
  append(call, r);
}

}  // namespace apptracer
