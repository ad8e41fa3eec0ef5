#include "analyzer/trace/operations.h"

#include <algorithm>

namespace apptracer::trace {

std::string_view to_string(OpKind kind) {
  switch (kind) {
    case OpKind::Allocation: return "allocation";
    case OpKind::Free: return "free";
    case OpKind::Copy: return "copy";
    case OpKind::Memset: return "memset";
    case OpKind::Kernel: return "kernel";
    case OpKind::Migration: return "migration";
    case OpKind::HostPhase: return "host phase";
    case OpKind::Collective: return "collective";
    case OpKind::Message: return "message";
    case OpKind::Prefetch: return "prefetch";
    case OpKind::EventRecord: return "event record";
    case OpKind::EventWait: return "event wait";
  }
  return "?";
}

bool is_lifetime_op(OpKind kind) { return kind == OpKind::Allocation || kind == OpKind::Free; }

void set_times(Operation& op, NullableInt api_start_ns, NullableInt gpu_start_ns,
               NullableInt gpu_end_ns) {
  op.issue_ns = api_start_ns.value_or(gpu_start_ns.value_or(0));
  op.start_ns = std::max(op.issue_ns, gpu_start_ns.value_or(op.issue_ns));
  op.end_ns = std::max(op.start_ns, gpu_end_ns.value_or(op.start_ns));
}

NullableInt copy_device(const Packed<MemcpyRow>& copy) {
  bool into_gpu_memory = is_device_memory(copy.dst_memory) || copy.dst_memory == MemoryKind::Managed;
  if (into_gpu_memory && copy.dst_device) return copy.dst_device;
  return copy.src_device ? copy.src_device : copy.dst_device;
}

namespace {

// An operation of a row: what every kind has.
template <typename Row>
Operation operation(OpKind kind, const Packed<Row>& row, NullableInt device) {
  Operation op;
  op.kind = kind;
  op.process = row.process;
  op.device = device;
  op.stream = row.stream;
  op.source_id = row.id;
  return op;
}

}  // namespace

Operation operation_of(const Packed<MemcpyRow>& copy) {
  Operation op = operation(copy.kind == CopyKind::Prefetch ? OpKind::Prefetch : OpKind::Copy, copy,
                           copy_device(copy));
  op.copy_kind = copy.kind;
  op.bytes = copy.bytes;
  set_times(op, copy.api_start_ns, copy.gpu_start_ns, copy.gpu_end_ns);
  return op;
}

Operation operation_of(const Packed<MemsetRow>& memset) {
  Operation op = operation(OpKind::Memset, memset, memset.device);
  op.bytes = memset.bytes;
  set_times(op, memset.api_start_ns, memset.gpu_start_ns, memset.gpu_end_ns);
  return op;
}

int64_t kernel_name_id(const Packed<KernelRow>& kernel) {
  return kernel.demangled_id.value_or(kernel.name_id.value_or(0));
}

Operation operation_of(const Packed<KernelRow>& kernel) {
  Operation op = operation(OpKind::Kernel, kernel, kernel.device);
  op.name_id = kernel_name_id(kernel);
  set_times(op, kernel.api_start_ns, kernel.gpu_start_ns, kernel.gpu_end_ns);
  return op;
}

Operation operation_of(const Packed<StreamEventRow>& event) {
  Operation op = operation(
      event.kind == StreamEventKind::Record ? OpKind::EventRecord : OpKind::EventWait, event,
      event.device);
  op.issue_ns = op.start_ns = op.end_ns = event.ns;
  return op;
}

}  // namespace apptracer::trace
