#include "translate/emit.h"

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstring>

#include "base/numa.h"
#include "base/self_cost.h"
#include "translate/api_dispatch.h"

namespace apptracer {

Record make_record(RecordOrigin origin, RecordType type) {
  Record r{};
  r.type = type;
  r.correlation_id = origin.correlation_id;
  r.own_correlation_id = origin.own_correlation_id;
  return r;
}

RecordOrigin origin_of(const CallSite& call) {
  return {call.outer_correlation_id, call.data->correlationId};
}

namespace {

Record make_record(const CallSite& call, RecordType type) {
  return make_record(origin_of(call), type);
}

void append(CallSite& call, Record& r) {
  call.ctx.buffers.append(r);
  call.emitted = true;
}

bool is_host_kind(AllocKind kind) {
  return memory_kind_of(kind) == MemoryKind::Pinned || kind == AllocKind::PageableHost;
}

uint16_t param_containing(const LaunchedFunction& function, uint32_t offset) {
  for (size_t i = 0; i < function.param_offsets.size(); ++i) {
    if (offset >= function.param_offsets[i] &&
        offset < function.param_offsets[i] + function.param_sizes[i]) {
      return static_cast<uint16_t>(i);
    }
  }
  return UINT16_MAX;
}

}  // namespace

void ArgWords::scan(const CaptureContext& ctx, const char* bytes, uint32_t buffer_offset,
                    uint32_t size, uint16_t param_index, uint32_t param_size) {
  const AddressRegions& device = ctx.allocations.regions();
  const AddressRegions* host = ctx.host_blocks;
  // Only words 8-byte aligned in the device's parameter buffer can be pointers.
  for (uint32_t k = (8 - buffer_offset % 8) % 8; k + 8 <= size && count < kMaxWords; k += 8) {
    uint64_t value;
    std::memcpy(&value, bytes + k, sizeof value);
    if (!device.may_contain(value) && !(host && host->may_contain(value))) continue;
    words[count++] = KernelArgWord{value, buffer_offset + k, param_index,
                                   static_cast<uint16_t>(param_size)};
  }
}

void gather_arg_words(const CaptureContext& ctx, const LaunchedFunction& function,
                      void** kernel_params, void** extra, ArgWords& out) {
  if (kernel_params) {
    for (size_t i = 0; i < function.param_offsets.size(); ++i) {
      if (kernel_params[i] == nullptr) continue;
      out.scan(ctx, static_cast<const char*>(kernel_params[i]), function.param_offsets[i],
               function.param_sizes[i], static_cast<uint16_t>(i), function.param_sizes[i]);
    }
    return;
  }
  // The packed form: one buffer laid out as the device sees it.
  const char* buffer = nullptr;
  size_t size = 0;
  for (size_t i = 0; extra && extra[i] != CU_LAUNCH_PARAM_END; i += 2) {
    if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER) buffer = static_cast<const char*>(extra[i + 1]);
    if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE) size = *static_cast<size_t*>(extra[i + 1]);
  }
  if (!buffer) return;
  int first = out.count;
  out.scan(ctx, buffer, 0, static_cast<uint32_t>(size), UINT16_MAX, 0);
  for (int w = first; w < out.count; ++w) {
    uint16_t index = param_containing(function, out.words[w].offset);
    out.words[w].param_index = index;
    out.words[w].param_size =
        index == UINT16_MAX ? 0 : static_cast<uint16_t>(function.param_sizes[index]);
  }
}

// At least one KernelArgs record follows every launch whose arguments were
// read (an empty one when none may be a pointer), so the writer can tell "no
// pointers" from "not captured".
void emit_arg_words(CaptureContext& ctx, RecordOrigin origin, const ArgWords& args) {
  int start = 0;
  do {
    Record r = make_record(origin, RecordType::KernelArgs);
    int n = std::min(KernelArgsRecord::kWords, args.count - start);
    r.kernel_args.count = static_cast<uint8_t>(n);
    r.kernel_args.last = start + n == args.count;
    std::memcpy(r.kernel_args.words, args.words + start, n * sizeof(KernelArgWord));
    ctx.buffers.append(r);
    start += n;
  } while (start < args.count);
}

void emit_allocation(CallSite& call, uint64_t address, uint64_t bytes, AllocKind kind,
                     uint32_t flags, uint64_t pitch) {
  Record r = make_record(call, RecordType::Allocation);
  int32_t device = is_host_kind(kind) ? -1 : call.device();
  r.allocation.alloc_id = call.ctx.allocations.add(address, bytes, kind, device, call.end_ns);
  r.allocation.address = address;
  r.allocation.bytes = bytes;
  r.allocation.pitch = pitch;
  r.allocation.ns = call.end_ns;
  r.allocation.flags = flags;
  r.allocation.device = device;
  r.allocation.kind = kind;
  // One move_pages call beside a call that pinned every page (milliseconds).
  if (memory_kind_of(kind) == MemoryKind::Pinned) {
    r.allocation.numa_node_plus_one = numa_node_of(address, bytes) + 1;
  }
  append(call, r);
}

void emit_unresolvable_allocation(CallSite& call, AllocKind kind, uint64_t key, uint64_t address,
                                  uint64_t bytes, uint32_t flags) {
  Record r = make_record(call, RecordType::Allocation);
  r.allocation.alloc_id = call.ctx.allocations.add_unresolvable(kind, key, call.end_ns);
  r.allocation.address = address;
  r.allocation.bytes = bytes;
  r.allocation.ns = call.end_ns;
  r.allocation.flags = flags;
  r.allocation.device = call.device();
  r.allocation.kind = kind;
  append(call, r);
}

void emit_free(CallSite& call, uint64_t address) {
  // A free captured into a graph happens at each launch; the address stays
  // the graph's (fixed across launches), so its allocation stays live.
  if (address == 0 || call.captured) return;
  std::optional<AllocationInfo> freed = call.ctx.allocations.remove(address, call.start_ns);
  if (!freed) return;
  Record r = make_record(call, RecordType::Free);
  r.free.alloc_id = freed->id;
  r.free.ns = call.start_ns;
  append(call, r);
}

bool emit_unresolvable_free(CallSite& call, AllocKind kind, uint64_t key) {
  std::optional<uint64_t> id = call.ctx.allocations.remove_unresolvable(kind, key);
  if (!id) return false;
  Record r = make_record(call, RecordType::Free);
  r.free.alloc_id = *id;
  r.free.ns = call.start_ns;
  append(call, r);
  return true;
}

AllocKind pinned_host_kind(unsigned int flags) {
  static_assert(cudaHostAllocWriteCombined == CU_MEMHOSTALLOC_WRITECOMBINED &&
                    cudaHostAllocMapped == CU_MEMHOSTALLOC_DEVICEMAP,
                "runtime and driver host-allocation flags differ");
  if (flags & CU_MEMHOSTALLOC_WRITECOMBINED) return AllocKind::WriteCombinedHost;
  if (flags & CU_MEMHOSTALLOC_DEVICEMAP) return AllocKind::MappedHost;
  return AllocKind::PinnedHost;
}

MemcpyRecord copy_record(uint64_t dst, uint64_t src, uint64_t bytes, CopyKind kind, bool is_async) {
  MemcpyRecord m{};
  m.dst = dst;
  m.src = src;
  m.bytes = bytes;
  m.kind = kind;
  m.is_async = is_async;
  m.src_device = m.dst_device = -1;
  m.stream = -1;
  return m;
}

void emit_memcpy(CallSite& call, const MemcpyRecord& copy) {
  if (call.captured) return;
  Record r = make_record(call, RecordType::Memcpy);
  r.memcpy = copy;
  r.memcpy.api_start_ns = call.start_ns;
  PageTouch destination = copy_destination_at_entry();
  r.memcpy.dst_pages_mapped = destination.mapped;
  r.memcpy.dst_pages_untouched = destination.untouched;
  append(call, r);
}

void emit_memset(CallSite& call, uint64_t address, uint32_t value, uint8_t element_size,
                 uint64_t width, uint64_t height, uint64_t pitch) {
  if (call.captured) return;
  Record r = make_record(call, RecordType::Memset);
  MemsetRecord& s = r.memset;
  s.address = address;
  s.bytes = width * element_size * height;
  bool pitched = pitch != 0;
  s.width = pitched ? width * element_size : 0;
  s.height = pitched ? height : 0;
  s.pitch = pitch;
  s.value = value;
  s.element_size = element_size;
  s.is_async = call.async();
  s.api_start_ns = call.start_ns;
  append(call, r);
}

void emit_kernel(CallSite& call, const void* function, const LaunchValues& launch, LaunchKind kind,
                 void** kernel_params, void** extra) {
  if (call.captured) return;
  const LaunchedFunction& info = call.ctx.cuda.function(function, call.data->symbolName);
  bool args_read = call.ctx.kernel_arguments && (kernel_params || extra);
  ArgWords args;
  if (args_read) {
    self_cost::Timer timer(self_cost::Site::KernelArguments);
    gather_arg_words(call.ctx, info, kernel_params, extra, args);
  }
  Record r = make_record(call, RecordType::Kernel);
  KernelRecord& k = r.kernel;
  k.function_handle = reinterpret_cast<uint64_t>(function);
  k.api_start_ns = call.start_ns;
  k.name_id = info.name_id;
  k.launch = launch;
  k.device = call.device();
  k.arg_words = static_cast<uint16_t>(args.count);
  k.args_captured = args_read;
  k.launch_kind = kind;
  append(call, r);
  if (args_read) emit_arg_words(call.ctx, origin_of(call), args);
}

namespace {

bool is_device_side(CUmemorytype type) {
  return type == CU_MEMORYTYPE_DEVICE || type == CU_MEMORYTYPE_ARRAY;
}

}  // namespace

CopyKind copy_kind(CUmemorytype src, CUmemorytype dst) {
  if (src == CU_MEMORYTYPE_UNIFIED || dst == CU_MEMORYTYPE_UNIFIED) return CopyKind::Unknown;
  if (is_device_side(src)) return is_device_side(dst) ? CopyKind::DtoD : CopyKind::DtoH;
  return is_device_side(dst) ? CopyKind::HtoD : CopyKind::HtoH;
}

uint64_t copy_endpoint(CUmemorytype type, const void* host, CUdeviceptr device) {
  if (type == CU_MEMORYTYPE_HOST) return reinterpret_cast<uint64_t>(host);
  if (type == CU_MEMORYTYPE_ARRAY) return 0;  // arrays have no linear address
  return device;                              // device or unified
}

void emit_sync(CallSite& call, SyncKind kind, const void* stream, uint64_t event_handle) {
  Record r = make_record(call, RecordType::Sync);
  r.sync.start_ns = call.start_ns;
  r.sync.end_ns = call.end_ns;
  r.sync.event_handle = event_handle;
  r.sync.stream = kind == SyncKind::Stream ? call.name_stream(stream) : -1;
  r.sync.device = call.device();
  r.sync.kind = kind;
  append(call, r);
}

void emit_stream_event(CallSite& call, StreamEventKind kind, const void* event, const void* stream) {
  Record r = make_record(call, RecordType::StreamEvent);
  r.stream_event.ns = call.start_ns;
  r.stream_event.event_handle = reinterpret_cast<uint64_t>(event);
  r.stream_event.stream = call.name_stream(stream);
  r.stream_event.device = call.device();
  r.stream_event.kind = kind;
  append(call, r);
}

// --- unified memory ----------------------------------------------------------

static_assert(cudaMemAdviseSetReadMostly == CU_MEM_ADVISE_SET_READ_MOSTLY &&
                  cudaMemAdviseUnsetAccessedBy == CU_MEM_ADVISE_UNSET_ACCESSED_BY &&
                  static_cast<int>(MemAdvice::SetReadMostly) == cudaMemAdviseSetReadMostly &&
                  static_cast<int>(MemAdvice::UnsetAccessedBy) == cudaMemAdviseUnsetAccessedBy,
              "advice numbers differ between the runtime, the driver and the trace");
static_assert(cudaMemAttachGlobal == CU_MEM_ATTACH_GLOBAL && cudaMemAttachHost == CU_MEM_ATTACH_HOST &&
                  cudaMemAttachSingle == CU_MEM_ATTACH_SINGLE &&
                  static_cast<int>(MemAdvice::AttachSingle) == 10 + cudaMemAttachSingle,
              "attachment flags differ between the runtime, the driver and the trace");
static_assert(static_cast<int>(cudaMemLocationTypeHostNumaCurrent) ==
                      CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT &&
                  static_cast<int>(MemLocationType::HostNumaCurrent) ==
                      CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT,
              "location types differ between the runtime, the driver and the trace");

namespace {

Record advice_record(const CallSite& call, MemAdvice advice, uint64_t address, uint64_t bytes) {
  Record r = make_record(call, RecordType::MemAdvice);
  r.mem_advice.address = address;
  r.mem_advice.bytes = bytes;
  r.mem_advice.ns = call.start_ns;
  r.mem_advice.stream = -1;
  r.mem_advice.location_id = -1;
  r.mem_advice.advice = advice;
  r.mem_advice.location_type = MemLocationType::Invalid;
  return r;
}

}  // namespace

MemTarget mem_target(int location_type, int location_id) {
  switch (location_type) {
    case CU_MEM_LOCATION_TYPE_DEVICE:
    case CU_MEM_LOCATION_TYPE_HOST_NUMA:
      return {static_cast<MemLocationType>(location_type), location_id};
    case CU_MEM_LOCATION_TYPE_HOST:
    case CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT:
      return {static_cast<MemLocationType>(location_type), -1};  // the id is ignored
    default:
      return {MemLocationType::Invalid, -1};
  }
}

MemTarget legacy_mem_target(int device) {
  if (device == CU_DEVICE_CPU) return {MemLocationType::Host, -1};
  // Negative otherwise (CU_DEVICE_INVALID): advice that takes no device.
  if (device < 0) return {MemLocationType::Invalid, -1};
  return {MemLocationType::Device, device};
}

void emit_mem_advice(CallSite& call, int advice, uint64_t address, uint64_t bytes,
                     MemTarget target) {
  Record r = advice_record(call, static_cast<MemAdvice>(advice), address, bytes);
  r.mem_advice.location_type = target.type;
  r.mem_advice.location_id = target.id;
  append(call, r);
}

void emit_stream_attach(CallSite& call, uint64_t address, uint64_t bytes, unsigned int flags,
                        const void* stream) {
  Record r = advice_record(call, static_cast<MemAdvice>(10 + flags), address, bytes);
  r.mem_advice.stream = call.name_stream(stream);
  append(call, r);
}

void emit_prefetch(CallSite& call, uint64_t address, uint64_t bytes, MemTarget target,
                   const void* stream) {
  MemcpyRecord m = copy_record(address, address, bytes, CopyKind::Prefetch, true);
  if (target.type == MemLocationType::Device) m.dst_device = target.id;
  m.stream = call.name_stream(stream);
  emit_memcpy(call, m);
}

}  // namespace apptracer
