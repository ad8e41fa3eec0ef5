#include "um_scenario.h"

namespace apptracer::testing {

namespace {

constexpr int64_t kM = 0x7e0000000000;
constexpr int64_t kQ = 0x7e0010000000;
constexpr int64_t kStatic = 0x600000;  // a `__managed__` variable

int64_t managed(TraceBuilder& trace, int64_t address, int64_t bytes) {
  AllocationRow row;
  row.kind = AllocKind::Managed;
  row.address = address;
  row.bytes = bytes;
  row.alloc_ns = 10;
  return trace.add(row);
}

int64_t device_buffer(TraceBuilder& trace, int64_t address) {
  AllocationRow row;
  row.address = address;
  row.bytes = 4096;
  row.alloc_ns = 10;
  return trace.add(row);
}

int64_t kernel(TraceBuilder& trace, const char* name, int64_t api_ns, int64_t gpu_start,
               int64_t gpu_end, int64_t in, int64_t out) {
  KernelRow row;
  row.mangled_name = std::string("_Z") + name;
  row.demangled_name = name;
  row.stream = 7;
  row.api_start_ns = api_ns;
  row.gpu_start_ns = gpu_start;
  row.gpu_end_ns = gpu_end;
  int64_t id = trace.add(row);
  KernelArgRow arg;
  arg.kernel_id = id;
  arg.alloc_id = in;
  arg.alloc_offset = 0;
  arg.access = in == out ? AccessKind::ReadWrite : AccessKind::Read;
  arg.access_source = in == out ? AccessSource::Assumed : AccessSource::ConstSignature;
  trace.add(arg);
  if (in == out) return id;
  arg.param_index = 1;
  arg.offset = 8;
  arg.alloc_id = out;
  arg.access = AccessKind::ReadWrite;
  arg.access_source = AccessSource::Assumed;
  trace.add(arg);
  return id;
}

int64_t migration(TraceBuilder& trace, UmCounterKind kind, int64_t address,
                  std::optional<int64_t> alloc, int64_t bytes, int64_t start, int64_t end,
                  UmMigrationCause cause) {
  UmEventRow row;
  row.counter_kind = kind;
  row.address = address;
  row.bytes = row.value = bytes;
  row.alloc_id = alloc;
  if (alloc) row.alloc_offset = 0;
  if (kind != UmCounterKind::BytesHtoD) row.src_device = 0;
  if (kind != UmCounterKind::BytesDtoH) row.dst_device = 0;
  row.start_ns = start;
  row.end_ns = end;
  row.cause = static_cast<int64_t>(cause);
  return trace.add(row);
}

void gpu_fault(TraceBuilder& trace, int64_t address, std::optional<int64_t> alloc, int64_t ns,
               int64_t faults) {
  UmEventRow row;
  row.counter_kind = UmCounterKind::GpuPageFault;
  row.address = address;
  row.alloc_id = alloc;
  row.src_device = 0;
  row.start_ns = ns;
  row.end_ns = ns + 5;
  row.value = faults;
  row.cause = 1;  // read
  trace.add(row);
}

void cpu_fault(TraceBuilder& trace, int64_t address, int64_t alloc, int64_t ns) {
  UmEventRow row;
  row.counter_kind = UmCounterKind::CpuPageFault;
  row.address = address;
  row.alloc_id = alloc;
  row.alloc_offset = address - kM;
  row.start_ns = ns;
  row.value = 0x401000;  // the faulting instruction
  trace.add(row);
}

void advise(TraceBuilder& trace, MemAdvice advice, int64_t alloc, int64_t ns) {
  MemAdviceRow row;
  row.advice = advice;
  row.address = kM;
  row.bytes = 64 * kMiB;
  row.alloc_id = alloc;
  row.alloc_offset = 0;
  row.location_type = MemLocationType::Device;
  row.location_id = 0;
  row.ns = ns;
  trace.add(row);
}

int64_t prefetch(TraceBuilder& trace, int64_t alloc, int64_t api_ns) {
  MemcpyRow row;
  row.kind = CopyKind::Prefetch;
  row.bytes = 2 * kMiB;
  row.src_address = row.dst_address = kQ;
  row.src_alloc_id = row.dst_alloc_id = alloc;
  row.src_offset = row.dst_offset = 0;
  row.src_memory = row.dst_memory = MemoryKind::Managed;
  row.dst_device = 0;
  row.stream = 7;
  row.is_async = true;
  row.api_start_ns = api_ns;
  return trace.add(row);
}

}  // namespace

UmScenario add_um_scenario(TraceBuilder& trace) {
  UmScenario ids{};
  ids.m = managed(trace, kM, 64 * kMiB);
  ids.out = device_buffer(trace, 0x7f0000000000);
  ids.out2 = device_buffer(trace, 0x7f0000001000);
  ids.q = managed(trace, kQ, 2 * kMiB);
  advise(trace, MemAdvice::SetPreferredLocation, ids.m, 50);
  cpu_fault(trace, kM, ids.m, 100);
  cpu_fault(trace, kM + 4096, ids.m, 110);

  ids.sum1 = kernel(trace, "sum", 200, 300, 1300, ids.m, ids.out);
  gpu_fault(trace, kM, ids.m, 310, 12);
  gpu_fault(trace, kM + 32 * kMiB, ids.m, 320, 4);
  migration(trace, UmCounterKind::BytesHtoD, kM, ids.m, 32 * kMiB, 330, 600,
            UmMigrationCause::Coherence);
  migration(trace, UmCounterKind::BytesHtoD, kM + 32 * kMiB, ids.m, 32 * kMiB, 610, 900,
            UmMigrationCause::Coherence);
  migration(trace, UmCounterKind::BytesHtoD, kStatic, std::nullopt, 4096, 700, 710,
            UmMigrationCause::Coherence);
  gpu_fault(trace, kStatic, std::nullopt, 705, 1);

  ids.sum2 = kernel(trace, "sum", 1400, 1500, 1600, ids.m, ids.out2);
  SyncRow sync;
  sync.start_ns = 1610;
  sync.end_ns = 1700;
  trace.add(sync);
  advise(trace, MemAdvice::SetAccessedBy, ids.m, 1750);
  cpu_fault(trace, kM, ids.m, 1800);
  ids.dtoh = migration(trace, UmCounterKind::BytesDtoH, kM, ids.m, 64 * kMiB, 1805, 2000,
                       UmMigrationCause::Coherence);
  cpu_fault(trace, kM + 4096, ids.m, 1810);

  ids.prefetch = prefetch(trace, ids.q, 2100);
  migration(trace, UmCounterKind::BytesHtoD, kQ, ids.q, 2 * kMiB, 2150, 2200,
            UmMigrationCause::Prefetch);
  ids.scale = kernel(trace, "scale", 2300, 2400, 2500, ids.q, ids.q);
  ids.idle_prefetch = prefetch(trace, ids.q, 2600);
  return ids;
}

}  // namespace apptracer::testing
