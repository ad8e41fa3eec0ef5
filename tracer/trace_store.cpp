#include "trace_store.h"

#include <cxxabi.h>

#include <algorithm>

#include <cstdlib>
#include <cstring>
#include <memory>

#include "apptracer/schema.h"
#include "apptracer/signature.h"
#include "string_table.h"

namespace apptracer {

namespace {

std::optional<int64_t> optional_device(int32_t device) {
  if (device < 0) return std::nullopt;
  return device;
}

std::optional<int64_t> optional_nonzero(uint64_t value) {
  if (value == 0) return std::nullopt;
  return static_cast<int64_t>(value);
}

int64_t as_int(uint64_t value) { return static_cast<int64_t>(value); }

// A copy's direction from where its endpoints live, for calls that say
// "default" (unified addressing) and for rows that never get activity.
CopyKind infer_copy_kind(MemoryKind src, MemoryKind dst) {
  // Managed memory moves on demand: only the activity record knows.
  if (src == MemoryKind::Managed || dst == MemoryKind::Managed) return CopyKind::Unknown;
  if (src == MemoryKind::Unknown && dst == MemoryKind::Unknown) return CopyKind::Unknown;
  bool src_device = is_device_memory(src);
  bool dst_device = is_device_memory(dst);
  if (src_device && dst_device) return CopyKind::DtoD;
  if (src_device) return CopyKind::DtoH;
  if (dst_device) return CopyKind::HtoD;
  return CopyKind::HtoH;
}

}  // namespace

TraceStore::TraceStore(const std::string& path, const AllocationRegistry& registry,
                       HostBlockResolution host)
    : db_(path, Database::Mode::Create), registry_(registry), host_(std::move(host)) {
  // WAL: a crash or SIGKILL leaves every committed pass readable.
  // synchronous=NORMAL: durable across process death, which is what we need.
  // A large page cache and rare checkpoints keep SQLite from re-reading and
  // re-writing pages while the program runs; finish() checkpoints once.
  db_.exec(
      "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA cache_size=-65536;"
      " PRAGMA wal_autocheckpoint=16384; PRAGMA temp_store=MEMORY;");
  with_transaction(db_, [&] {
    db_.exec(trace_tables_sql());
    db_.exec(std::string("INSERT INTO meta VALUES ('status', '") + kStatusRecording + "')");
  });
  insert_api_call_ = db_.prepare(
      "INSERT INTO api_calls (correlation_id, parent_correlation_id, domain, cbid, name_id, tid,"
      " start_ns, end_ns, return_code, device) VALUES (?,?,?,?,?,?,?,?,?,?)");
  insert_allocation_ = db_.prepare(
      "INSERT INTO allocations (id, kind, address, bytes, device, flags, pitch,"
      " alloc_correlation_id, alloc_ns, alloc_tid, numa_node) VALUES (?,?,?,?,?,?,?,?,?,?,?)");
  update_free_ = db_.prepare(
      "UPDATE allocations SET free_correlation_id = ?, free_ns = ? WHERE id = ?");
  insert_memcpy_ = db_.prepare(
      "INSERT INTO memcpys (call_correlation_id, kind, src_address, dst_address, bytes,"
      " src_alloc_id, dst_alloc_id, src_offset, dst_offset, src_memory, dst_memory, src_device,"
      " dst_device, is_async, width, height, src_pitch, dst_pitch, api_start_ns, src_numa_node,"
      " dst_numa_node, stream) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
  insert_memset_ = db_.prepare(
      "INSERT INTO memsets (call_correlation_id, address, bytes, value, element_size, alloc_id,"
      " alloc_offset, memory, device, is_async, api_start_ns) VALUES (?,?,?,?,?,?,?,?,?,?,?)");
  insert_kernel_ = db_.prepare(
      "INSERT INTO kernels (call_correlation_id, name_id, demangled_id, launch_kind, device,"
      " grid_x, grid_y, grid_z, block_x, block_y, block_z, dynamic_shared_bytes,"
      " function_handle, api_start_ns) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
  insert_sync_ = db_.prepare(
      "INSERT INTO syncs (call_correlation_id, kind, device, stream, event_handle, tid, start_ns,"
      " end_ns) VALUES (?,?,?,?,?,?,?,?)");
  insert_stream_event_ = db_.prepare(
      "INSERT INTO stream_events (call_correlation_id, kind, event_handle, stream, device, ns)"
      " VALUES (?,?,?,?,?,?)");
  insert_thread_ = db_.prepare(
      "INSERT INTO threads (tid, name, first_seen_ns) VALUES (?,?,?)"
      " ON CONFLICT(tid) DO UPDATE SET name = excluded.name");
  insert_string_ = db_.prepare("INSERT OR REPLACE INTO strings (id, text) VALUES (?,?)");
  // A copy may reach the GPU as several transfers (a peer copy without peer
  // access is staged through the host): the row spans them all. The first
  // activity says what memory the endpoints were; the call's own direction
  // stands unless it was "default".
  update_memcpy_gpu_ = db_.prepare(
      "UPDATE memcpys SET gpu_start_ns = min(coalesce(gpu_start_ns, ?1), ?1),"
      " gpu_end_ns = max(coalesce(gpu_end_ns, ?2), ?2), stream = coalesce(stream, ?3),"
      " kind = CASE WHEN kind = 0 THEN ?4 ELSE kind END,"
      " src_memory = CASE WHEN gpu_start_ns IS NULL THEN ?5 ELSE src_memory END,"
      " dst_memory = CASE WHEN gpu_start_ns IS NULL THEN ?6 ELSE dst_memory END,"
      " src_device = coalesce(src_device, ?7), dst_device = coalesce(dst_device, ?8)"
      " WHERE id = ?9");
  update_memset_gpu_ = db_.prepare(
      "UPDATE memsets SET gpu_start_ns = ?, gpu_end_ns = ?, stream = ?, device = ?, memory = ?"
      " WHERE id = ?");
  update_kernel_gpu_ = db_.prepare(
      "UPDATE kernels SET gpu_start_ns = ?, gpu_end_ns = ?, stream = ?, device = ?,"
      " static_shared_bytes = ?, registers_per_thread = ?, graph_node_id = ?,"
      " name_id = coalesce(name_id, ?) WHERE id = ?");
  insert_kernel_arg_ = db_.prepare(
      "INSERT INTO kernel_args (kernel_id, param_index, offset, size, raw_value, alloc_id,"
      " alloc_offset, access, access_source) VALUES (?,?,?,?,?,?,?,?,?)");
  upsert_meta_ = db_.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES (?,?)");
  insert_device_ = db_.prepare(
      "INSERT OR REPLACE INTO devices (id, name, uuid, pci_bus_id, cc_major, cc_minor,"
      " total_memory_bytes, sm_count, numa_node) VALUES (?,?,?,?,?,?,?,?,?)");
  insert_mem_advice_ = db_.prepare(
      "INSERT INTO mem_advice (call_correlation_id, advice, address, bytes, alloc_id, alloc_offset,"
      " location_type, location_id, stream, tid, ns) VALUES (?,?,?,?,?,?,?,?,?,?,?)");
  insert_um_event_ = db_.prepare(
      "INSERT INTO um_events (counter_kind, address, bytes, alloc_id, alloc_offset, src_device,"
      " dst_device, start_ns, end_ns, value, cause, flags) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)");
}

void TraceStore::begin() { db_.exec("BEGIN"); }
void TraceStore::commit() { db_.exec("COMMIT"); }

void TraceStore::write_string(uint32_t id, const std::string& text) {
  insert_string_.bind(1, static_cast<int64_t>(id)).bind(2, text).run();
}

void TraceStore::write_device(const DeviceInfo& d) {
  insert_device_.bind(1, static_cast<int64_t>(d.ordinal))
      .bind(2, d.name)
      .bind(3, d.uuid)
      .bind(4, d.pci_bus_id)
      .bind(5, static_cast<int64_t>(d.cc_major))
      .bind(6, static_cast<int64_t>(d.cc_minor))
      .bind(7, as_int(d.total_memory_bytes))
      .bind(8, static_cast<int64_t>(d.sm_count))
      .bind(9, static_cast<int64_t>(d.numa_node))
      .run();
}

void TraceStore::set_meta(const std::string& key, const std::string& value) {
  upsert_meta_.bind(1, key).bind(2, value).run();
}

void TraceStore::write(const Record* records, size_t count) {
  for (size_t i = 0; i < count; ++i) {
    const Record& r = records[i];
    switch (r.type) {
      case RecordType::ApiCall: write_api_call(r); break;
      case RecordType::Allocation: write_allocation(r); break;
      case RecordType::Free: write_free(r); break;
      case RecordType::Memcpy: write_memcpy(r); break;
      case RecordType::Memset: write_memset(r); break;
      case RecordType::Kernel: write_kernel(r); break;
      case RecordType::Sync: write_sync(r); break;
      case RecordType::StreamEvent: write_stream_event(r); break;
      case RecordType::Thread: write_thread(r); break;
      case RecordType::KernelArgs: write_kernel_args(r); break;
      case RecordType::MemAdvice: write_mem_advice(r); break;
      case RecordType::UmEvent: write_um_event(r); break;
      case RecordType::GpuKernel:
      case RecordType::GpuMemcpy:
      case RecordType::GpuMemset: write_activity(r); break;
    }
  }
}

TraceStore::Resolved TraceStore::resolve(uint64_t address, uint64_t ns) const {
  Resolved out;
  if (address == 0) return out;
  // CUDA's view first: registered host memory is also a host block.
  std::optional<AllocationInfo> a = registry_.find(address, ns);
  if (!a && host_.registry) a = host_.registry->find(address, ns);
  if (a) {
    out.alloc_id = as_int(a->id);
    out.offset = as_int(address - a->address);
    out.memory = memory_kind_of(a->kind);
    out.device = optional_device(a->device);
    if (a->numa_node >= 0) out.numa_node = a->numa_node;
  }
  return out;
}

uint32_t TraceStore::demangled_id(uint32_t name_id) {
  if (name_id == 0) return 0;
  auto cached = demangled_.find(name_id);
  if (cached != demangled_.end()) return cached->second;
  uint32_t id = name_id;
  std::string mangled = strings().text(name_id);
  if (!mangled.empty()) {
    int status = 0;
    std::unique_ptr<char, decltype(&std::free)> demangled(
        abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status), &std::free);
    if (status == 0 && demangled) id = strings().intern(demangled.get());
  }
  demangled_[name_id] = id;
  return id;
}

void TraceStore::write_api_call(const Record& r) {
  const ApiCallRecord& a = r.api;
  // CUPTI's function names are global constants: intern each pointer once.
  uint32_t& name_id = api_name_ids_[a.name];
  if (name_id == 0) name_id = strings().intern(a.name ? a.name : "?");
  insert_api_call_.bind(1, static_cast<int64_t>(r.own_correlation_id))
      .bind(2, optional_nonzero(a.parent_correlation_id))
      .bind(3, static_cast<int64_t>(a.domain))
      .bind(4, static_cast<int64_t>(a.cbid))
      .bind(5, static_cast<int64_t>(name_id))
      .bind(6, static_cast<int64_t>(r.tid))
      .bind(7, as_int(a.start_ns))
      .bind(8, as_int(a.end_ns))
      .bind(9, static_cast<int64_t>(a.return_code))
      .bind(10, optional_device(a.device))
      .run();
}

void TraceStore::write_allocation(const Record& r) {
  const AllocationRecord& a = r.allocation;
  uint32_t tid = a.alloc_tid ? a.alloc_tid : r.tid;
  insert_allocation_.bind(1, as_int(a.alloc_id))
      .bind(2, static_cast<int64_t>(a.kind))
      .bind(3, as_int(a.address))
      .bind(4, as_int(a.bytes))
      .bind(5, optional_device(a.device))
      .bind(6, static_cast<int64_t>(a.flags))
      .bind(7, optional_nonzero(a.pitch))
      .bind(8, optional_nonzero(r.correlation_id))
      .bind(9, as_int(a.ns))
      .bind(10, static_cast<int64_t>(tid))
      .bind(11, a.numa_node >= 0 ? std::optional<int64_t>(a.numa_node) : std::nullopt)
      .run();
  auto pending = pending_frees_.find(a.alloc_id);
  if (pending != pending_frees_.end()) {
    update_free_.bind(1, pending->second.correlation_id)
        .bind(2, as_int(pending->second.ns))
        .bind(3, as_int(a.alloc_id))
        .run();
    pending_frees_.erase(pending);
  }
}

void TraceStore::write_free(const Record& r) {
  update_free_.bind(1, optional_nonzero(r.correlation_id))
      .bind(2, as_int(r.free.ns))
      .bind(3, as_int(r.free.alloc_id))
      .run();
  if (db_.changes() == 0) {
    pending_frees_[r.free.alloc_id] = {optional_nonzero(r.correlation_id), r.free.ns};
  }
}

void TraceStore::write_memcpy(const Record& r) { await_activity(r, insert_memcpy_row(r)); }

int64_t TraceStore::insert_memcpy_row(const Record& r) {
  const MemcpyRecord& m = r.memcpy;
  Resolved src = resolve(m.src, m.api_start_ns);
  Resolved dst = resolve(m.dst, m.api_start_ns);
  CopyKind kind = m.kind;
  // An unresolved endpoint on the host side of a known direction is pageable
  // (or memory we do not see); on the device side it stays unknown.
  if (!src.alloc_id && (kind == CopyKind::HtoD || kind == CopyKind::HtoH)) {
    src.memory = MemoryKind::Pageable;
  }
  if (!dst.alloc_id && (kind == CopyKind::DtoH || kind == CopyKind::HtoH)) {
    dst.memory = MemoryKind::Pageable;
  }
  if (kind == CopyKind::Unknown) kind = infer_copy_kind(src.memory, dst.memory);
  if (kind == CopyKind::Prefetch) {
    // The managed range moves to where the call said (the host: no device),
    // from wherever its pages were, which the call does not say.
    src.device = std::nullopt;
    dst.device = optional_device(m.dst_device);
  }
  if (m.src_device >= 0) src.device = m.src_device;
  if (m.dst_device >= 0) dst.device = m.dst_device;
  insert_memcpy_.bind(1, optional_nonzero(r.correlation_id))
      .bind(2, static_cast<int64_t>(kind))
      .bind(3, as_int(m.src))
      .bind(4, as_int(m.dst))
      .bind(5, as_int(m.bytes))
      .bind(6, src.alloc_id)
      .bind(7, dst.alloc_id)
      .bind(8, src.offset)
      .bind(9, dst.offset)
      .bind(10, static_cast<int64_t>(src.memory))
      .bind(11, static_cast<int64_t>(dst.memory))
      .bind(12, src.device)
      .bind(13, dst.device)
      .bind(14, static_cast<int64_t>(m.is_async))
      .bind(15, optional_nonzero(m.width))
      .bind(16, optional_nonzero(m.height))
      .bind(17, optional_nonzero(m.src_pitch))
      .bind(18, optional_nonzero(m.dst_pitch))
      .bind(19, as_int(m.api_start_ns))
      .bind(20, m.src_numa_node >= 0 ? std::optional<int64_t>(m.src_numa_node) : src.numa_node)
      .bind(21, m.dst_numa_node >= 0 ? std::optional<int64_t>(m.dst_numa_node) : dst.numa_node)
      .bind(22, m.stream >= 0 ? std::optional<int64_t>(m.stream) : std::nullopt)
      .run();
  return db_.last_insert_rowid();
}

void TraceStore::write_memset(const Record& r) { await_activity(r, insert_memset_row(r)); }

int64_t TraceStore::insert_memset_row(const Record& r) {
  const MemsetRecord& m = r.memset;
  Resolved target = resolve(m.address, m.api_start_ns);
  insert_memset_.bind(1, optional_nonzero(r.correlation_id))
      .bind(2, as_int(m.address))
      .bind(3, as_int(m.bytes))
      .bind(4, static_cast<int64_t>(m.value))
      .bind(5, static_cast<int64_t>(m.element_size))
      .bind(6, target.alloc_id)
      .bind(7, target.offset)
      .bind(8, static_cast<int64_t>(target.memory))
      .bind(9, target.device)
      .bind(10, static_cast<int64_t>(m.is_async))
      .bind(11, as_int(m.api_start_ns))
      .run();
  return db_.last_insert_rowid();
}

void TraceStore::write_kernel(const Record& r) {
  const KernelRecord& k = r.kernel;
  int64_t row_id = insert_kernel_row(r);
  if (k.arg_words > 0) {
    launches_awaiting_args_[r.own_correlation_id] = {row_id, k.api_start_ns, k.name_id};
  }
  await_activity(r, row_id);
}

int64_t TraceStore::insert_kernel_row(const Record& r) {
  const KernelRecord& k = r.kernel;
  insert_kernel_.bind(1, optional_nonzero(r.correlation_id))
      .bind(2, optional_nonzero(k.name_id))
      .bind(3, optional_nonzero(demangled_id(k.name_id)))
      .bind(4, static_cast<int64_t>(k.launch_kind))
      .bind(5, optional_device(k.device))
      .bind(6, static_cast<int64_t>(k.grid[0]))
      .bind(7, static_cast<int64_t>(k.grid[1]))
      .bind(8, static_cast<int64_t>(k.grid[2]))
      .bind(9, static_cast<int64_t>(k.block[0]))
      .bind(10, static_cast<int64_t>(k.block[1]))
      .bind(11, static_cast<int64_t>(k.block[2]))
      .bind(12, static_cast<int64_t>(k.dynamic_shared_bytes))
      .bind(13, optional_nonzero(k.function_handle))
      .bind(14, optional_nonzero(k.api_start_ns))
      .run();
  return db_.last_insert_rowid();
}

std::optional<TraceStore::Access> TraceStore::access_of(uint32_t name_id, uint16_t index) {
  auto cached = signatures_.find(name_id);
  if (cached == signatures_.end()) {
    cached = signatures_.emplace(name_id, parameter_types(strings().text(demangled_id(name_id)))).first;
  }
  const auto& types = cached->second;
  // No signature (extern "C", Triton, JAX) or no layout: a pointer is all we know.
  if (!types || index >= types->size()) return Access{AccessKind::ReadWrite, AccessSource::Assumed};
  const std::string& type = (*types)[index];
  if (is_arithmetic(type)) return std::nullopt;
  if (is_pointer_to_const(type)) return Access{AccessKind::Read, AccessSource::ConstSignature};
  // A non-const pointer, or a pointer inside a struct passed by value.
  return Access{AccessKind::ReadWrite, AccessSource::Assumed};
}

void TraceStore::write_kernel_args(const Record& r) {
  auto launch = launches_awaiting_args_.find(r.own_correlation_id);
  if (launch == launches_awaiting_args_.end()) return;
  const KernelArgsRecord& args = r.kernel_args;
  for (int i = 0; i < args.count && i < KernelArgsRecord::kWords; ++i) {
    const KernelArgWord& word = args.words[i];
    std::optional<Access> access = access_of(launch->second.name_id, word.param_index);
    if (!access) continue;
    uint64_t launch_ns = launch->second.api_start_ns;
    Resolved target = resolve(word.value, launch_ns);
    if (!target.alloc_id && host_.promote) {
      // Pageable memory first touched by a kernel (systems where GPUs read
      // host memory directly): it becomes a row now.
      if (std::optional<Record> row = host_.promote(word.value, launch_ns)) {
        write_allocation(*row);
        target = resolve(word.value, launch_ns);
      }
    }
    bool known_param = word.param_index != UINT16_MAX;
    insert_kernel_arg_.bind(1, launch->second.row_id)
        .bind(2, known_param ? std::optional<int64_t>(word.param_index) : std::nullopt)
        .bind(3, static_cast<int64_t>(word.offset))
        .bind(4, static_cast<int64_t>(word.param_size))
        .bind(5, as_int(word.value))
        .bind(6, target.alloc_id)
        .bind(7, target.offset)
        .bind(8, static_cast<int64_t>(target.alloc_id ? access->kind : AccessKind::Unknown))
        .bind(9, static_cast<int64_t>(target.alloc_id ? access->source : AccessSource::None))
        .run();
  }
  if (args.last) launches_awaiting_args_.erase(launch);
}

void TraceStore::write_sync(const Record& r) {
  const SyncRecord& s = r.sync;
  insert_sync_.bind(1, optional_nonzero(r.correlation_id))
      .bind(2, static_cast<int64_t>(s.kind))
      .bind(3, optional_device(s.device))
      .bind(4, s.stream >= 0 ? std::optional<int64_t>(s.stream) : std::nullopt)
      .bind(5, optional_nonzero(s.event_handle))
      .bind(6, static_cast<int64_t>(r.tid))
      .bind(7, as_int(s.start_ns))
      .bind(8, as_int(s.end_ns))
      .run();
}

void TraceStore::write_stream_event(const Record& r) {
  const StreamEventRecord& e = r.stream_event;
  insert_stream_event_.bind(1, optional_nonzero(r.correlation_id))
      .bind(2, static_cast<int64_t>(e.kind))
      .bind(3, as_int(e.event_handle))
      .bind(4, e.stream >= 0 ? std::optional<int64_t>(e.stream) : std::nullopt)
      .bind(5, optional_device(e.device))
      .bind(6, as_int(e.ns))
      .run();
}

void TraceStore::write_thread(const Record& r) {
  std::string name(r.thread.name, strnlen(r.thread.name, sizeof r.thread.name));
  insert_thread_.bind(1, static_cast<int64_t>(r.tid))
      .bind(2, name)
      .bind(3, as_int(r.thread.ns))
      .run();
}

// --- joining GPU activity ---------------------------------------------------

namespace {

RecordType api_side_of(RecordType activity) {
  switch (activity) {
    case RecordType::GpuKernel: return RecordType::Kernel;
    case RecordType::GpuMemcpy: return RecordType::Memcpy;
    case RecordType::GpuMemset: return RecordType::Memset;
    default: return activity;
  }
}

}  // namespace

uint64_t TraceStore::join_key(uint32_t correlation_id, RecordType api_side_type) {
  return (static_cast<uint64_t>(correlation_id) << 8) | static_cast<uint8_t>(api_side_type);
}

// A row waits under the outermost call's correlation id (what CUPTI gives
// activity of runtime-launched work) and, when a nested driver call made it,
// under that call's id too; whichever activity arrives claims it under both.
void TraceStore::await_activity(const Record& r, int64_t row_id) {
  // A prefetch moves pages through the unified-memory driver: CUPTI reports
  // it as um_events, never as copy activity.
  if (r.type == RecordType::Memcpy && r.memcpy.kind == CopyKind::Prefetch) return;
  if (take_held_activity(r, row_id)) return;
  uint64_t outer = join_key(r.correlation_id, r.type);
  bool nested = r.own_correlation_id != r.correlation_id && r.own_correlation_id != 0;
  uint64_t own = nested ? join_key(r.own_correlation_id, r.type) : outer;
  awaiting_[outer].push_back({row_id, own});
  if (nested) awaiting_[own].push_back({row_id, outer});
}

void TraceStore::forget_awaiting(uint64_t key, int64_t row_id) {
  auto it = awaiting_.find(key);
  if (it == awaiting_.end()) return;
  auto& rows = it->second;
  for (auto row = rows.begin(); row != rows.end(); ++row) {
    if (row->row_id == row_id) {
      rows.erase(row);
      break;
    }
  }
  if (rows.empty()) awaiting_.erase(it);
}

bool TraceStore::take_held_activity(const Record& r, int64_t row_id) {
  for (uint32_t id : {r.correlation_id, r.own_correlation_id}) {
    auto held = held_.find(join_key(id, r.type));
    if (held == held_.end() || held->second.empty()) continue;
    // All of a copy's transfers are its; a kernel or memset has one.
    do {
      apply_activity(held->second.front().record, row_id);
      held->second.pop_front();
    } while (r.type == RecordType::Memcpy && !held->second.empty());
    if (held->second.empty()) held_.erase(held);
    return true;
  }
  return false;
}

void TraceStore::write_activity(const Record& r) {
  uint64_t key = join_key(r.correlation_id, api_side_of(r.type));
  auto waiting = awaiting_.find(key);
  if (waiting != awaiting_.end() && !waiting->second.empty()) {
    AwaitingRow claimed = waiting->second.front();
    waiting->second.pop_front();
    if (waiting->second.empty()) awaiting_.erase(waiting);
    if (claimed.other_key != key) forget_awaiting(claimed.other_key, claimed.row_id);
    apply_activity(r, claimed.row_id);
    return;
  }
  auto claimed_copy = copies_with_activity_.find(r.correlation_id);
  if (r.type == RecordType::GpuMemcpy && claimed_copy != copies_with_activity_.end()) {
    apply_activity(r, claimed_copy->second.row_id);  // a later transfer of the same copy
    return;
  }
  held_[key].push_back(HeldActivity{r, 0});
}

void TraceStore::apply_activity(const Record& r, int64_t row_id) {
  switch (r.type) {
    case RecordType::GpuKernel: {
      const GpuKernelRecord& k = r.gpu_kernel;
      update_kernel_gpu_.bind(1, as_int(k.start_ns))
          .bind(2, as_int(k.end_ns))
          .bind(3, static_cast<int64_t>(k.stream))
          .bind(4, optional_device(k.device))
          .bind(5, static_cast<int64_t>(k.static_shared_bytes))
          .bind(6, static_cast<int64_t>(k.registers_per_thread))
          .bind(7, optional_nonzero(k.graph_node_id))
          .bind(8, optional_nonzero(k.name_id))
          .bind(9, row_id)
          .run();
      break;
    }
    case RecordType::GpuMemcpy: {
      const GpuMemcpyRecord& m = r.gpu_memcpy;
      copies_with_activity_[r.correlation_id] = {row_id, 0};
      update_memcpy_gpu_.bind(1, as_int(m.start_ns))
          .bind(2, as_int(m.end_ns))
          .bind(3, static_cast<int64_t>(m.stream))
          .bind(4, static_cast<int64_t>(m.kind))
          .bind(5, static_cast<int64_t>(m.src_memory))
          .bind(6, static_cast<int64_t>(m.dst_memory))
          .bind(7, optional_device(m.src_device))
          .bind(8, optional_device(m.dst_device))
          .bind(9, row_id)
          .run();
      break;
    }
    case RecordType::GpuMemset: {
      const GpuMemsetRecord& m = r.gpu_memset;
      update_memset_gpu_.bind(1, as_int(m.start_ns))
          .bind(2, as_int(m.end_ns))
          .bind(3, static_cast<int64_t>(m.stream))
          .bind(4, optional_device(m.device))
          .bind(5, static_cast<int64_t>(m.memory))
          .bind(6, row_id)
          .run();
      break;
    }
    default: break;
  }
}

void TraceStore::insert_activity_only(const Record& r) {
  switch (r.type) {
    case RecordType::GpuKernel: {
      const GpuKernelRecord& g = r.gpu_kernel;
      Record launch{};
      launch.type = RecordType::Kernel;
      launch.correlation_id = r.correlation_id;
      KernelRecord& k = launch.kernel;
      k.name_id = g.name_id;
      std::copy(g.grid, g.grid + 3, k.grid);
      std::copy(g.block, g.block + 3, k.block);
      k.dynamic_shared_bytes = g.dynamic_shared_bytes;
      k.device = g.device;
      k.launch_kind = g.graph_node_id ? LaunchKind::Graph : LaunchKind::ActivityOnly;
      apply_activity(r, insert_kernel_row(launch));
      break;
    }
    case RecordType::GpuMemcpy: {
      const GpuMemcpyRecord& m = r.gpu_memcpy;
      Record copy{};
      copy.type = RecordType::Memcpy;
      copy.correlation_id = r.correlation_id;
      copy.memcpy.bytes = m.bytes;
      copy.memcpy.kind = m.kind;
      copy.memcpy.is_async = m.is_async;
      copy.memcpy.src_device = m.src_device;
      copy.memcpy.dst_device = m.dst_device;
      copy.memcpy.api_start_ns = m.start_ns;
      apply_activity(r, insert_memcpy_row(copy));
      break;
    }
    case RecordType::GpuMemset: {
      Record set{};
      set.type = RecordType::Memset;
      set.correlation_id = r.correlation_id;
      set.memset.bytes = r.gpu_memset.bytes;
      set.memset.value = r.gpu_memset.value;
      set.memset.element_size = 1;
      set.memset.api_start_ns = r.gpu_memset.start_ns;
      apply_activity(r, insert_memset_row(set));
      break;
    }
    default: break;
  }
}

void TraceStore::end_pass() {
  // Transfers of one copy arrive together; after two passes no more will.
  for (auto it = copies_with_activity_.begin(); it != copies_with_activity_.end();) {
    it = ++it->second.passes > 2 ? copies_with_activity_.erase(it) : std::next(it);
  }
  for (auto it = held_.begin(); it != held_.end();) {
    auto& queue = it->second;
    while (!queue.empty() && ++queue.front().passes > 2) {
      insert_activity_only(queue.front().record);
      queue.pop_front();
    }
    it = queue.empty() ? held_.erase(it) : std::next(it);
  }
}

std::vector<std::pair<std::string, int64_t>> TraceStore::finish() {
  for (auto& [key, queue] : held_) {
    for (const HeldActivity& held : queue) insert_activity_only(held.record);
  }
  held_.clear();
  awaiting_.clear();
  db_.exec(trace_indexes_sql());
  std::vector<std::pair<std::string, int64_t>> counts;
  for (const char* table : {"api_calls", "allocations", "memcpys", "memsets", "kernels",
                            "kernel_args", "syncs", "stream_events", "threads", "devices",
                            "um_events", "mem_advice"}) {
    Statement count = db_.prepare(std::string("SELECT count(*) FROM ") + table);
    count.step();
    counts.emplace_back(table, count.int64(0));
  }
  return counts;
}

void TraceStore::checkpoint() {
  // Back to a rollback journal: readers then need no -wal/-shm files beside it.
  db_.exec("PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode=DELETE;");
}

// --- unified memory ---------------------------------------------------------

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

std::optional<int64_t> optional_nonnegative(int64_t value) {
  if (value < 0) return std::nullopt;
  return value;
}

}  // namespace

void TraceStore::write_mem_advice(const Record& r) {
  const MemAdviceRecord& a = r.mem_advice;
  Resolved target = resolve(a.address, a.ns);
  bool located = a.location_type != MemLocationType::Invalid;
  insert_mem_advice_.bind(1, optional_nonzero(r.correlation_id))
      .bind(2, static_cast<int64_t>(a.advice))
      .bind(3, as_int(a.address))
      .bind(4, as_int(a.bytes))
      .bind(5, target.alloc_id)
      .bind(6, target.offset)
      .bind(7, located ? std::optional<int64_t>(static_cast<int64_t>(a.location_type)) : std::nullopt)
      .bind(8, optional_nonnegative(a.location_id))
      .bind(9, optional_nonnegative(a.stream))
      .bind(10, static_cast<int64_t>(r.tid))
      .bind(11, as_int(a.ns))
      .run();
}

// Addresses in no allocation stay unresolved: `__managed__` variables, for
// one, are managed memory that no allocation call created.
void TraceStore::write_um_event(const Record& r) {
  const UmEventRecord& e = r.um_event;
  Resolved target = resolve(e.address, e.start_ns);
  insert_um_event_.bind(1, static_cast<int64_t>(e.counter_kind))
      .bind(2, as_int(e.address))
      .bind(3, um_value_is_bytes(e.counter_kind) ? std::optional<int64_t>(as_int(e.value))
                                                 : std::nullopt)
      .bind(4, target.alloc_id)
      .bind(5, target.offset)
      .bind(6, optional_device(e.src_device))
      .bind(7, optional_device(e.dst_device))
      .bind(8, as_int(e.start_ns))
      .bind(9, optional_nonzero(e.end_ns))
      .bind(10, as_int(e.value))
      .bind(11, um_flags_are_cause(e.counter_kind)
                    ? std::optional<int64_t>(static_cast<int64_t>(e.flags))
                    : std::nullopt)
      .bind(12, static_cast<int64_t>(e.flags))
      .run();
}

}  // namespace apptracer
