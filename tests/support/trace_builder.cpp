#include "trace_builder.h"

#include "apptracer/schema.h"

namespace apptracer::testing {

namespace {

int64_t enum_value(ApiDomain v) { return static_cast<int64_t>(v); }
int64_t enum_value(AllocKind v) { return static_cast<int64_t>(v); }
int64_t enum_value(MemoryKind v) { return static_cast<int64_t>(v); }
int64_t enum_value(CopyKind v) { return static_cast<int64_t>(v); }
int64_t enum_value(SyncKind v) { return static_cast<int64_t>(v); }
int64_t enum_value(StreamEventKind v) { return static_cast<int64_t>(v); }
int64_t enum_value(LaunchKind v) { return static_cast<int64_t>(v); }
int64_t enum_value(AccessKind v) { return static_cast<int64_t>(v); }
int64_t enum_value(AccessSource v) { return static_cast<int64_t>(v); }
int64_t enum_value(UmCounterKind v) { return static_cast<int64_t>(v); }
int64_t enum_value(MemAdvice v) { return static_cast<int64_t>(v); }
std::optional<int64_t> enum_value(std::optional<MemLocationType> v) {
  return v ? std::optional<int64_t>(static_cast<int64_t>(*v)) : std::nullopt;
}

}  // namespace

TraceBuilder::TraceBuilder(const std::string& path) : db_(path, Database::Mode::Create) {
  // A test trace need not survive a power cut; without syncing each row,
  // building one on disk takes milliseconds instead of a second.
  db_.exec("PRAGMA synchronous = OFF; PRAGMA journal_mode = MEMORY");
  with_transaction(db_, [&] { db_.exec(trace_schema_sql()); });
  set_meta("status", kStatusComplete);
}

int64_t TraceBuilder::string_id(const std::string& text) {
  Statement find = db_.prepare("SELECT id FROM strings WHERE text = ?");
  find.bind(1, text);
  if (find.step()) return find.int64(0);
  Statement insert = db_.prepare("INSERT INTO strings(text) VALUES (?)");
  insert.bind(1, text).run();
  return db_.last_insert_rowid();
}

void TraceBuilder::set_meta(const std::string& key, const std::string& value) {
  Statement insert = db_.prepare("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)");
  insert.bind(1, key).bind(2, value).run();
}

void TraceBuilder::add_thread(int64_t tid, const std::string& name) {
  Statement insert = db_.prepare("INSERT INTO threads(tid, name) VALUES (?, ?)");
  insert.bind(1, tid).bind(2, name).run();
}

void TraceBuilder::add_device(const DeviceRow& row) {
  Statement insert = db_.prepare(
      "INSERT INTO devices(id, name, uuid, total_memory_bytes, sm_count) VALUES (?, ?, ?, ?, ?)");
  insert.bind(1, row.id).bind(2, row.name).bind(3, row.uuid).bind(4, row.total_memory_bytes);
  insert.bind(5, row.sm_count).run();
}

int64_t TraceBuilder::add(const ApiCallRow& row) {
  Statement insert = db_.prepare(
      "INSERT INTO api_calls(correlation_id, parent_correlation_id, domain, cbid, name_id, tid, "
      "start_ns, end_ns, return_code, device, stream) VALUES (?,?,?,?,?,?,?,?,?,?,?)");
  insert.bind(1, row.correlation_id).bind(2, row.parent_correlation_id);
  insert.bind(3, enum_value(row.domain)).bind(4, row.cbid).bind(5, string_id(row.name));
  insert.bind(6, row.tid).bind(7, row.start_ns).bind(8, row.end_ns).bind(9, row.return_code);
  insert.bind(10, row.device).bind(11, row.stream).run();
  return db_.last_insert_rowid();
}

int64_t TraceBuilder::add(const AllocationRow& row) {
  Statement insert = db_.prepare(
      "INSERT INTO allocations(kind, address, bytes, device, alloc_correlation_id, alloc_ns, "
      "alloc_tid, free_correlation_id, free_ns) VALUES (?,?,?,?,?,?,?,?,?)");
  insert.bind(1, enum_value(row.kind)).bind(2, row.address).bind(3, row.bytes);
  insert.bind(4, row.device).bind(5, row.alloc_correlation_id).bind(6, row.alloc_ns);
  insert.bind(7, row.alloc_tid).bind(8, row.free_correlation_id).bind(9, row.free_ns).run();
  return db_.last_insert_rowid();
}

int64_t TraceBuilder::add(const MemcpyRow& row) {
  Statement insert = db_.prepare(
      "INSERT INTO memcpys(call_correlation_id, kind, src_address, dst_address, bytes, "
      "src_alloc_id, dst_alloc_id, src_memory, dst_memory, src_device, dst_device, stream, "
      "is_async, api_start_ns, gpu_start_ns, gpu_end_ns, src_offset, dst_offset) "
      "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
  insert.bind(1, row.call_correlation_id).bind(2, enum_value(row.kind));
  insert.bind(3, row.src_address).bind(4, row.dst_address).bind(5, row.bytes);
  insert.bind(6, row.src_alloc_id).bind(7, row.dst_alloc_id);
  insert.bind(8, enum_value(row.src_memory)).bind(9, enum_value(row.dst_memory));
  insert.bind(10, row.src_device).bind(11, row.dst_device).bind(12, row.stream);
  insert.bind(13, int64_t{row.is_async}).bind(14, row.api_start_ns);
  insert.bind(15, row.gpu_start_ns).bind(16, row.gpu_end_ns);
  insert.bind(17, row.src_offset).bind(18, row.dst_offset).run();
  return db_.last_insert_rowid();
}

int64_t TraceBuilder::add(const MemsetRow& row) {
  Statement insert = db_.prepare(
      "INSERT INTO memsets(call_correlation_id, address, bytes, value, alloc_id, memory, device, "
      "stream, is_async, api_start_ns, gpu_start_ns, gpu_end_ns, alloc_offset) "
      "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)");
  insert.bind(1, row.call_correlation_id).bind(2, row.address).bind(3, row.bytes);
  insert.bind(4, row.value).bind(5, row.alloc_id).bind(6, enum_value(row.memory));
  insert.bind(7, row.device).bind(8, row.stream).bind(9, int64_t{row.is_async});
  insert.bind(10, row.api_start_ns).bind(11, row.gpu_start_ns).bind(12, row.gpu_end_ns);
  insert.bind(13, row.alloc_offset).run();
  return db_.last_insert_rowid();
}

int64_t TraceBuilder::add(const KernelRow& row) {
  Statement insert = db_.prepare(
      "INSERT INTO kernels(call_correlation_id, name_id, demangled_id, launch_kind, device, "
      "stream, grid_x, grid_y, grid_z, block_x, block_y, block_z, api_start_ns, gpu_start_ns, "
      "gpu_end_ns) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
  insert.bind(1, row.call_correlation_id).bind(2, string_id(row.mangled_name));
  if (row.demangled_name) {
    insert.bind(3, string_id(*row.demangled_name));
  } else {
    insert.bind_null(3);
  }
  insert.bind(4, enum_value(row.launch_kind)).bind(5, row.device).bind(6, row.stream);
  insert.bind(7, row.grid_x).bind(8, row.grid_y).bind(9, row.grid_z);
  insert.bind(10, row.block_x).bind(11, row.block_y).bind(12, row.block_z);
  insert.bind(13, row.api_start_ns).bind(14, row.gpu_start_ns).bind(15, row.gpu_end_ns).run();
  return db_.last_insert_rowid();
}

void TraceBuilder::add(const KernelArgRow& row) {
  Statement insert = db_.prepare(
      "INSERT INTO kernel_args(kernel_id, param_index, offset, size, raw_value, alloc_id, "
      "alloc_offset, access, access_source) VALUES (?,?,?,?,?,?,?,?,?)");
  insert.bind(1, row.kernel_id).bind(2, row.param_index).bind(3, row.offset).bind(4, row.size);
  insert.bind(5, row.raw_value).bind(6, row.alloc_id).bind(7, row.alloc_offset);
  insert.bind(8, enum_value(row.access)).bind(9, enum_value(row.access_source)).run();
}

int64_t TraceBuilder::add(const SyncRow& row) {
  Statement insert = db_.prepare(
      "INSERT INTO syncs(call_correlation_id, kind, device, stream, tid, start_ns, end_ns, "
      "event_handle) VALUES (?,?,?,?,?,?,?,?)");
  insert.bind(1, row.call_correlation_id).bind(2, enum_value(row.kind)).bind(3, row.device);
  insert.bind(4, row.stream).bind(5, row.tid).bind(6, row.start_ns).bind(7, row.end_ns);
  insert.bind(8, row.event_handle).run();
  return db_.last_insert_rowid();
}

int64_t TraceBuilder::add(const StreamEventRow& row) {
  Statement insert = db_.prepare(
      "INSERT INTO stream_events(call_correlation_id, kind, event_handle, stream, device, ns) "
      "VALUES (?,?,?,?,?,?)");
  insert.bind(1, row.call_correlation_id).bind(2, enum_value(row.kind));
  insert.bind(3, row.event_handle).bind(4, row.stream).bind(5, row.device).bind(6, row.ns).run();
  return db_.last_insert_rowid();
}

int64_t TraceBuilder::add(const NvtxRangeRow& row) {
  Statement insert = db_.prepare(
      "INSERT INTO nvtx_ranges(name_id, tid, depth, start_ns, end_ns) VALUES (?,?,?,?,?)");
  insert.bind(1, string_id(row.name)).bind(2, row.tid).bind(3, row.depth);
  insert.bind(4, row.start_ns).bind(5, row.end_ns).run();
  return db_.last_insert_rowid();
}

int64_t TraceBuilder::add(const UmEventRow& row) {
  Statement insert = db_.prepare(
      "INSERT INTO um_events(counter_kind, address, bytes, alloc_id, alloc_offset, src_device, "
      "dst_device, start_ns, end_ns, value, cause, flags) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)");
  insert.bind(1, enum_value(row.counter_kind)).bind(2, row.address).bind(3, row.bytes);
  insert.bind(4, row.alloc_id).bind(5, row.alloc_offset).bind(6, row.src_device);
  insert.bind(7, row.dst_device).bind(8, row.start_ns).bind(9, row.end_ns).bind(10, row.value);
  insert.bind(11, row.cause).bind(12, row.flags).run();
  return db_.last_insert_rowid();
}

int64_t TraceBuilder::add(const MemAdviceRow& row) {
  Statement insert = db_.prepare(
      "INSERT INTO mem_advice(call_correlation_id, advice, address, bytes, alloc_id, "
      "alloc_offset, location_type, location_id, stream, tid, ns) VALUES (?,?,?,?,?,?,?,?,?,?,?)");
  insert.bind(1, row.call_correlation_id).bind(2, enum_value(row.advice)).bind(3, row.address);
  insert.bind(4, row.bytes).bind(5, row.alloc_id).bind(6, row.alloc_offset);
  insert.bind(7, enum_value(row.location_type)).bind(8, row.location_id).bind(9, row.stream);
  insert.bind(10, row.tid).bind(11, row.ns).run();
  return db_.last_insert_rowid();
}

}  // namespace apptracer::testing
