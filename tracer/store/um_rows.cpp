#include "store/um_rows.h"

namespace apptracer {

namespace {

// CUPTI's value is a region size for these kinds (a fault-group count or a
// program counter for faults, a count for throttling).
bool um_value_is_bytes(UmCounterKind kind) {
  switch (kind) {
    case UmCounterKind::BytesHtoD:
    case UmCounterKind::BytesDtoH:
    case UmCounterKind::BytesDtoD:
    case UmCounterKind::Thrashing:
    case UmCounterKind::RemoteMap:
      return true;
    default:
      return false;
  }
}

// CUPTI's flags are a migration cause, an access type or a remote-map cause
// for these kinds (um_migration_cause, um_access_type, um_remote_map_cause);
// for thrashing and throttling they are activity flags, kept in `flags` only.
bool um_flags_are_cause(UmCounterKind kind) {
  switch (kind) {
    case UmCounterKind::BytesHtoD:
    case UmCounterKind::BytesDtoH:
    case UmCounterKind::BytesDtoD:
    case UmCounterKind::GpuPageFault:
    case UmCounterKind::CpuPageFault:
    case UmCounterKind::RemoteMap:
      return true;
    default:
      return false;
  }
}

std::optional<int64_t> nonnegative(int64_t value) {
  if (value < 0) return std::nullopt;
  return value;
}

std::optional<int64_t> nonzero(uint64_t value) {
  if (value == 0) return std::nullopt;
  return static_cast<int64_t>(value);
}

}  // namespace

MemAdviceRow mem_advice_row(const Record& r, const Resolved& target) {
  const MemAdviceRecord& a = r.mem_advice;
  MemAdviceRow row;
  row.call_correlation_id = nonzero(r.correlation_id);
  row.advice = a.advice;
  row.address = static_cast<int64_t>(a.address);
  row.bytes = static_cast<int64_t>(a.bytes);
  row.alloc_id = target.alloc_id;
  row.alloc_offset = target.offset;
  if (a.location_type != MemLocationType::Invalid) row.location_type = a.location_type;
  row.location_id = nonnegative(a.location_id);
  row.stream = nonnegative(a.stream);
  row.tid = r.tid;
  row.ns = static_cast<int64_t>(a.ns);
  return row;
}

UmEventRow um_event_row(const Record& r, const Resolved& target) {
  const UmEventRecord& e = r.um_event;
  UmEventRow row;
  row.counter_kind = e.counter_kind;
  row.address = static_cast<int64_t>(e.address);
  if (um_value_is_bytes(e.counter_kind)) row.bytes = static_cast<int64_t>(e.value);
  row.alloc_id = target.alloc_id;
  row.alloc_offset = target.offset;
  row.src_device = nonnegative(e.src_device);
  row.dst_device = nonnegative(e.dst_device);
  row.start_ns = static_cast<int64_t>(e.start_ns);
  row.end_ns = nonzero(e.end_ns);
  row.value = static_cast<int64_t>(e.value);
  if (um_flags_are_cause(e.counter_kind)) row.cause = static_cast<int64_t>(e.flags);
  row.flags = static_cast<int64_t>(e.flags);
  return row;
}

}  // namespace apptracer
