#include "translate/activity_records.h"

#include <cstring>
#include <string>
#include <unordered_map>

namespace apptracer {

namespace {

CopyKind copy_kind(uint8_t cupti_kind) {
  switch (cupti_kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA: return CopyKind::HtoD;
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH: return CopyKind::DtoH;
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA:
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD:
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA: return CopyKind::DtoD;
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH: return CopyKind::HtoH;
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP: return CopyKind::PtoP;
    default: return CopyKind::Unknown;
  }
}

MemoryKind memory_kind(uint32_t cupti_kind) {
  return cupti_kind <= static_cast<uint32_t>(MemoryKind::ManagedStatic)
             ? static_cast<MemoryKind>(cupti_kind)
             : MemoryKind::Unknown;
}

// A kernel's name, interned once per name per thread: CUPTI hands the same
// few names over and over, and the string table's lock is shared.
uint32_t kernel_name_id(CaptureContext& ctx, const char* name) {
  if (!name) return 0;
  struct Cached {
    std::string text;
    uint32_t id;
  };
  thread_local std::unordered_map<const char*, Cached> cache;
  auto hit = cache.find(name);
  // CUPTI's name pointers are stable while a module is loaded; the text check
  // catches a pointer reused for another name after an unload.
  if (hit != cache.end() && hit->second.text == name) return hit->second.id;
  uint32_t id = ctx.strings.intern(name);
  cache[name] = Cached{name, id};
  return id;
}

Record with_type(RecordType type, uint32_t correlation_id) {
  Record r{};
  r.type = type;
  r.correlation_id = correlation_id;
  return r;
}

void convert_kernel(CaptureContext& ctx, const CUpti_ActivityKernel10& k) {
  Record r = with_type(RecordType::GpuKernel, k.correlationId);
  GpuKernelRecord& g = r.gpu_kernel;
  g.start_ns = k.start;
  g.end_ns = k.end;
  g.graph_node_id = k.graphNodeId;
  g.name_id = kernel_name_id(ctx, k.name);
  g.stream = k.streamId;
  g.grid[0] = static_cast<uint32_t>(k.gridX);
  g.grid[1] = static_cast<uint32_t>(k.gridY);
  g.grid[2] = static_cast<uint32_t>(k.gridZ);
  g.block[0] = static_cast<uint32_t>(k.blockX);
  g.block[1] = static_cast<uint32_t>(k.blockY);
  g.block[2] = static_cast<uint32_t>(k.blockZ);
  g.static_shared_bytes = k.staticSharedMemory;
  g.dynamic_shared_bytes = k.dynamicSharedMemory;
  g.registers_per_thread = k.registersPerThread;
  g.device = static_cast<int32_t>(k.deviceId);
  ctx.buffers.append(r);
}

template <typename Copy>
Record gpu_copy(const Copy& m) {
  Record r = with_type(RecordType::GpuMemcpy, m.correlationId);
  GpuMemcpyRecord& g = r.gpu_memcpy;
  g.start_ns = m.start;
  g.end_ns = m.end;
  g.bytes = m.bytes;
  g.graph_node_id = m.graphNodeId;
  g.stream = m.streamId;
  g.device = static_cast<int32_t>(m.deviceId);
  g.src_device = g.dst_device = -1;
  g.kind = copy_kind(m.copyKind);
  g.src_memory = memory_kind(m.srcKind);
  g.dst_memory = memory_kind(m.dstKind);
  g.is_async = (m.flags & CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC) != 0;
  return r;
}

void convert_memcpy(CaptureContext& ctx, const CUpti_ActivityMemcpy6& m) {
  Record r = gpu_copy(m);
  ctx.buffers.append(r);
}

void convert_peer_copy(CaptureContext& ctx, const CUpti_ActivityMemcpyPtoP4& m) {
  Record r = gpu_copy(m);
  r.gpu_memcpy.src_device = static_cast<int32_t>(m.srcDeviceId);
  r.gpu_memcpy.dst_device = static_cast<int32_t>(m.dstDeviceId);
  ctx.buffers.append(r);
}

void convert_memset(CaptureContext& ctx, const CUpti_ActivityMemset4& m) {
  Record r = with_type(RecordType::GpuMemset, m.correlationId);
  GpuMemsetRecord& g = r.gpu_memset;
  g.start_ns = m.start;
  g.end_ns = m.end;
  g.bytes = m.bytes;
  g.graph_node_id = m.graphNodeId;
  g.value = m.value;
  g.stream = m.streamId;
  g.device = static_cast<int32_t>(m.deviceId);
  g.memory = memory_kind(m.memoryKind);
  ctx.buffers.append(r);
}

int32_t um_device(uint32_t cupti_id) {
  return cupti_id == CUPTI_UNIFIED_MEMORY_CPU_DEVICE_ID ? -1 : static_cast<int32_t>(cupti_id);
}

// Which of CUPTI's id and end fields mean something depends on the counter
// kind (cupti_activity.h); the rest stay -1 (the host side, or none) and 0.
void convert_um_counter(CaptureContext& ctx, const CUpti_ActivityUnifiedMemoryCounter3& u) {
  Record r = with_type(RecordType::UmEvent, 0);
  UmEventRecord& e = r.um_event;
  e.start_ns = u.start;
  e.address = u.address;
  e.value = u.value;
  e.flags = u.flags;
  e.src_device = e.dst_device = -1;
  e.counter_kind = u.counterKind < CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_COUNT
                       ? static_cast<UmCounterKind>(u.counterKind)  // same numbers
                       : UmCounterKind::Unknown;
  switch (u.counterKind) {
    case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_HTOD:
      e.dst_device = um_device(u.dstId);
      e.end_ns = u.end;
      break;
    case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_DTOH:
      e.src_device = um_device(u.srcId);
      e.end_ns = u.end;
      break;
    case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_DTOD:
      e.src_device = um_device(u.srcId);
      e.dst_device = um_device(u.dstId);
      e.end_ns = u.end;
      break;
    case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_GPU_PAGE_FAULT:
    case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_THROTTLING:
      e.src_device = um_device(u.srcId);  // the faulting (throttled) processor
      e.end_ns = u.end;
      break;
    case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_REMOTE_MAP:
      e.src_device = um_device(u.srcId);
      e.dst_device = um_device(u.dstId);
      break;
    default:
      break;  // CPU faults name no device; thrashing's srcId is a mask of devices
  }
  ctx.buffers.append(r);
}

void convert_stream(CaptureContext& ctx, const CUpti_ActivityStream& s) {
  Record r = with_type(RecordType::Stream, s.correlationId);
  r.stream.stream = s.streamId;
  r.stream.context_id = s.contextId;
  r.stream.priority = s.priority;
  auto flag = static_cast<uint32_t>(s.flag);
  r.stream.kind = flag <= static_cast<uint32_t>(StreamKind::Legacy) ? static_cast<StreamKind>(flag)
                                                                     : StreamKind::Unknown;
  ctx.buffers.append(r);
}

}  // namespace

void convert_activity(CaptureContext& ctx, const CUpti_Activity& activity) {
  switch (activity.kind) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
    case CUPTI_ACTIVITY_KIND_KERNEL:
      convert_kernel(ctx, reinterpret_cast<const CUpti_ActivityKernel10&>(activity));
      break;
    case CUPTI_ACTIVITY_KIND_MEMCPY:
      convert_memcpy(ctx, reinterpret_cast<const CUpti_ActivityMemcpy6&>(activity));
      break;
    case CUPTI_ACTIVITY_KIND_MEMCPY2:
      convert_peer_copy(ctx, reinterpret_cast<const CUpti_ActivityMemcpyPtoP4&>(activity));
      break;
    case CUPTI_ACTIVITY_KIND_MEMSET:
      convert_memset(ctx, reinterpret_cast<const CUpti_ActivityMemset4&>(activity));
      break;
    case CUPTI_ACTIVITY_KIND_STREAM:
      convert_stream(ctx, reinterpret_cast<const CUpti_ActivityStream&>(activity));
      break;
    case CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER:
      convert_um_counter(ctx, reinterpret_cast<const CUpti_ActivityUnifiedMemoryCounter3&>(activity));
      break;
    default:
      break;
  }
}

}  // namespace apptracer
