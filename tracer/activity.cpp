// CUPTI activity: GPU start/end of kernels, copies and memsets, and
// unified-memory counters (migrations, page faults, ...). CUPTI fills
// buffers we hand it and gives them back full (or on flush), possibly on
// several threads at once in CUDA 13: each completed buffer is converted into
// records on the thread that returns it, through that thread's own record
// buffer, so no state is shared here.
#include <cupti.h>

#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

#include "clock.h"
#include "log.h"
#include "string_table.h"
#include "traced_callbacks.h"
#include "tracer.h"

namespace apptracer {

namespace {

constexpr size_t kActivityBufferBytes = 8u << 20;
constexpr size_t kActivityAlignment = 8;

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

void convert_kernel(const CUpti_ActivityKernel10& k) {
  Record r{};
  r.type = RecordType::GpuKernel;
  r.correlation_id = k.correlationId;
  GpuKernelRecord& g = r.gpu_kernel;
  g.start_ns = k.start;
  g.end_ns = k.end;
  g.graph_node_id = k.graphNodeId;
  g.name_id = k.name ? strings().intern(k.name) : 0;
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
  record_buffers().append(r);
}

template <typename Copy>
Record copy_record(const Copy& m) {
  Record r{};
  r.type = RecordType::GpuMemcpy;
  r.correlation_id = m.correlationId;
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

void convert_memcpy(const CUpti_ActivityMemcpy6& m) {
  Record r = copy_record(m);
  record_buffers().append(r);
}

void convert_peer_copy(const CUpti_ActivityMemcpyPtoP4& m) {
  Record r = copy_record(m);
  r.gpu_memcpy.src_device = static_cast<int32_t>(m.srcDeviceId);
  r.gpu_memcpy.dst_device = static_cast<int32_t>(m.dstDeviceId);
  record_buffers().append(r);
}

void convert_memset(const CUpti_ActivityMemset4& m) {
  Record r{};
  r.type = RecordType::GpuMemset;
  r.correlation_id = m.correlationId;
  GpuMemsetRecord& g = r.gpu_memset;
  g.start_ns = m.start;
  g.end_ns = m.end;
  g.bytes = m.bytes;
  g.value = m.value;
  g.stream = m.streamId;
  g.device = static_cast<int32_t>(m.deviceId);
  g.memory = memory_kind(m.memoryKind);
  record_buffers().append(r);
}

int32_t um_device(uint32_t cupti_id) {
  return cupti_id == CUPTI_UNIFIED_MEMORY_CPU_DEVICE_ID ? -1 : static_cast<int32_t>(cupti_id);
}

// Which of CUPTI's id and end fields mean something depends on the counter
// kind (cupti_activity.h); the rest stay -1 (the host side, or none) and 0.
void convert_um_counter(const CUpti_ActivityUnifiedMemoryCounter3& u) {
  Record r{};
  r.type = RecordType::UmEvent;
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
  record_buffers().append(r);
}

void CUPTIAPI on_buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(kActivityAlignment, kActivityBufferBytes));
  *size = *buffer ? kActivityBufferBytes : 0;
  *max_records = 0;
}

void CUPTIAPI on_buffer_completed(CUcontext context, uint32_t stream_id, uint8_t* buffer,
                                  size_t, size_t valid_bytes) {
  CUpti_Activity* record = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid_bytes, &record) == CUPTI_SUCCESS) {
    switch (record->kind) {
      case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
      case CUPTI_ACTIVITY_KIND_KERNEL:
        convert_kernel(*reinterpret_cast<const CUpti_ActivityKernel10*>(record));
        break;
      case CUPTI_ACTIVITY_KIND_MEMCPY:
        convert_memcpy(*reinterpret_cast<const CUpti_ActivityMemcpy6*>(record));
        break;
      case CUPTI_ACTIVITY_KIND_MEMCPY2:
        convert_peer_copy(*reinterpret_cast<const CUpti_ActivityMemcpyPtoP4*>(record));
        break;
      case CUPTI_ACTIVITY_KIND_MEMSET:
        convert_memset(*reinterpret_cast<const CUpti_ActivityMemset4*>(record));
        break;
      case CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER:
        convert_um_counter(*reinterpret_cast<const CUpti_ActivityUnifiedMemoryCounter3*>(record));
        break;
      default:
        break;
    }
  }
  size_t dropped = 0;
  if (cuptiActivityGetNumDroppedRecords(context, stream_id, &dropped) == CUPTI_SUCCESS &&
      dropped > 0) {
    log_warn("CUPTI dropped {} activity records (GPU times of some operations are missing)",
             dropped);
  }
  std::free(buffer);
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
  UmCounterSetup setup = enable_traced_um_counters();
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
  writer().set_meta("um_counters", "enabled: " + joined(enabled_names) +
                                       "; unsupported: " + joined(unsupported_names));
}

bool activity_registered = false;

}  // namespace

bool enable_activity() {
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

void enable_um_counters() {
  static std::once_flag once;
  if (activity_registered) std::call_once(once, configure_and_enable_um_counters);
}

void flush_activity() { cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED); }

}  // namespace apptracer
