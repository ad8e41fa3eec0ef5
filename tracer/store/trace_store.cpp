#include "store/trace_store.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>

#include <cupti_driver_cbid.h>
#include <cupti_runtime_cbid.h>

#include "apptracer/row_reader.h"
#include "apptracer/schema.h"
#include "base/numa.h"
#include "store/um_rows.h"

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

std::optional<int64_t> optional_stream(int64_t stream) {
  if (stream < 0) return std::nullopt;
  return stream;
}

int64_t as_int(uint64_t value) { return static_cast<int64_t>(value); }

template <typename T>
std::optional<int64_t> keep_or(const std::optional<int64_t>& kept, T value) {
  return kept ? kept : std::optional<int64_t>(value);
}

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

// Which endpoints of a copy may be host memory the program got elsewhere
// (malloc, mmap, the stack): those a copy touches become host rows.
bool may_be_host(CopyKind kind, bool source) {
  switch (kind) {
    case CopyKind::HtoD: return source;
    case CopyKind::DtoH: return !source;
    case CopyKind::HtoH:
    case CopyKind::Unknown: return true;
    default: return false;
  }
}

bool is_host_memory(MemoryKind kind) {
  return kind == MemoryKind::Pageable || kind == MemoryKind::Pinned;
}

// The calls whose correlation id the work of a graph launch carries.
bool is_graph_launch(const ApiCallRecord& a) {
  if (a.domain == ApiDomain::Driver) {
    return a.cbid == CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch ||
           a.cbid == CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz;
  }
  return a.cbid == CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000 ||
         a.cbid == CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_ptsz_v10000;
}

// A joined row: batched the first time with an id of ours, replaced (after
// its batch is flushed, so the replacement cannot come first) when stored again.
// Reads a row of `batch`'s table back by id, flushing the batch first (the
// row may still wait in it).
template <typename Row>
std::function<std::optional<Row>(int64_t)> row_loader(Database& db, BatchInserter<Row>& batch) {
  auto by_id = std::make_shared<RowById<Row>>(db);
  return [by_id, &batch](int64_t id) -> std::optional<Row> {
    batch.flush();
    Row row;
    if (!by_id->read(id, row)) return std::nullopt;
    return row;
  };
}

template <typename Row>
void store_row(Row& row, bool again, BatchInserter<Row>& batch, RowInserter<Row>& replace,
               int64_t& next_id) {
  if (!again) {
    row.id = next_id++;
    batch.add(row);
    return;
  }
  batch.flush();
  replace.insert(row);
}

// The columns a launch's call gives, as it gave them: one assignment per
// APPTRACER_LAUNCH_COLUMN of tables.def.
void copy_launch_columns(const LaunchValues& launch, KernelRow& row) {
#define APPTRACER_LAUNCH_COLUMN(name, type, record_type, meaning, doc) row.name = launch.name;
#include "apptracer/tables.def"
}

}  // namespace

// --- how GPU activity fills rows --------------------------------------------

struct KernelTraits {
  static constexpr bool kMoreActivityMayCome = false;
  static void apply(KernelRow& row, const Record& r, bool) {
    const GpuKernelRecord& k = r.gpu_kernel;
    row.gpu_start_ns = as_int(k.start_ns);
    row.gpu_end_ns = as_int(k.end_ns);
    row.stream = static_cast<int64_t>(k.stream);
    row.device = optional_device(k.device);
    row.static_shared_bytes = static_cast<int64_t>(k.static_shared_bytes);
    row.registers_per_thread = static_cast<int64_t>(k.registers_per_thread);
    row.graph_node_id = optional_nonzero(k.graph_node_id);
    if (!row.name_id && k.name_id) row.name_id = static_cast<int64_t>(k.name_id);
  }
  static KernelRow activity_only(const Record& r) {
    const GpuKernelRecord& g = r.gpu_kernel;
    KernelRow row;
    row.call_correlation_id = optional_nonzero(r.correlation_id);
    row.grid_x = g.grid[0];
    row.grid_y = g.grid[1];
    row.grid_z = g.grid[2];
    row.block_x = g.block[0];
    row.block_y = g.block[1];
    row.block_z = g.block[2];
    row.dynamic_shared_bytes = static_cast<int64_t>(g.dynamic_shared_bytes);
    row.launch_kind = g.graph_node_id ? LaunchKind::Graph : LaunchKind::ActivityOnly;
    apply(row, r, true);
    return row;
  }
};

// A copy may reach the GPU as several transfers (a peer copy without peer
// access is staged through the host): the row spans them all. The first
// transfer says what memory the endpoints were; the call's own direction
// stands unless it was "default".
struct MemcpyTraits {
  static constexpr bool kMoreActivityMayCome = true;
  static void apply(MemcpyRow& row, const Record& r, bool first) {
    const GpuMemcpyRecord& m = r.gpu_memcpy;
    row.gpu_start_ns = std::min(row.gpu_start_ns.value_or(as_int(m.start_ns)), as_int(m.start_ns));
    row.gpu_end_ns = std::max(row.gpu_end_ns.value_or(as_int(m.end_ns)), as_int(m.end_ns));
    row.stream = keep_or(row.stream, static_cast<int64_t>(m.stream));
    if (row.kind == CopyKind::Unknown) row.kind = m.kind;
    if (first) {
      row.src_memory = m.src_memory;
      row.dst_memory = m.dst_memory;
    }
    if (m.src_device >= 0) row.src_device = keep_or(row.src_device, m.src_device);
    if (m.dst_device >= 0) row.dst_device = keep_or(row.dst_device, m.dst_device);
    if (m.graph_node_id) row.graph_node_id = keep_or(row.graph_node_id, as_int(m.graph_node_id));
  }
  static MemcpyRow activity_only(const Record& r) {
    const GpuMemcpyRecord& m = r.gpu_memcpy;
    MemcpyRow row;
    row.call_correlation_id = optional_nonzero(r.correlation_id);
    row.bytes = as_int(m.bytes);
    row.kind = m.kind;
    row.is_async = m.is_async;
    row.api_start_ns = as_int(m.start_ns);
    apply(row, r, true);
    return row;
  }
};

struct MemsetTraits {
  static constexpr bool kMoreActivityMayCome = false;
  static void apply(MemsetRow& row, const Record& r, bool) {
    const GpuMemsetRecord& m = r.gpu_memset;
    row.gpu_start_ns = as_int(m.start_ns);
    row.gpu_end_ns = as_int(m.end_ns);
    row.stream = static_cast<int64_t>(m.stream);
    row.device = optional_device(m.device);
    row.memory = m.memory;
    row.graph_node_id = optional_nonzero(m.graph_node_id);
  }
  static MemsetRow activity_only(const Record& r) {
    MemsetRow row;
    row.call_correlation_id = optional_nonzero(r.correlation_id);
    row.bytes = as_int(r.gpu_memset.bytes);
    row.value = r.gpu_memset.value;
    row.element_size = 1;
    row.api_start_ns = as_int(r.gpu_memset.start_ns);
    apply(row, r, true);
    return row;
  }
};

// --- the store ----------------------------------------------------------------

TraceStore::TraceStore(const std::string& path, const AllocationRegistry& registry,
                       StringTable& strings, HostBlockResolution host, StoreOptions options)
    : db_(path, Database::Mode::Create),
      strings_(strings),
      resolver_(registry, std::move(host), [this](const PromotedBlock& block) { write_promoted_block(block); }),
      signatures_(strings) {
  // WAL: a crash or SIGKILL leaves every committed pass readable.
  // synchronous=OFF: what SQLite wrote is in the OS's page cache when the
  // program dies, so the trace survives the program's death with no fsync;
  // only the machine's crash could tear it, which no trace is worth an fsync
  // per checkpoint for (10% of the writer's throughput).
  // A large page cache and rare checkpoints keep SQLite from re-reading and
  // re-writing pages while the program runs; finish() checkpoints once.
  db_.exec(
      "PRAGMA journal_mode=WAL; PRAGMA synchronous=OFF; PRAGMA cache_size=-65536;"
      " PRAGMA wal_autocheckpoint=16384; PRAGMA temp_store=MEMORY;");
  with_transaction(db_, [&] {
    db_.exec(trace_tables_sql());
    db_.exec(std::string("INSERT INTO meta VALUES ('status', '") + kStatusRecording + "')");
  });
  arg_sets_ = std::make_unique<KernelArgSets>(db_);
  sub_allocations_ = std::make_unique<SubAllocationRows>(
      db_, resolver_, [this](const std::string& key, const std::string& value) { set_meta(key, value); });
  exact_rows_ = std::make_unique<ExactRows>(db_, resolver_);
  collectives_ = std::make_unique<CollectiveRows>(db_, resolver_, options.hold_passes,
                                                  options.late_passes);
  api_calls_ = BatchInserter<ApiCallRow>(db_);
  allocations_ = RowInserter<AllocationRow>(db_);
  syncs_ = BatchInserter<SyncRow>(db_);
  stream_events_ = BatchInserter<StreamEventRow>(db_);
  streams_ = BatchInserter<StreamRow>(db_);
  mem_advice_ = BatchInserter<MemAdviceRow>(db_);
  um_events_ = BatchInserter<UmEventRow>(db_);
  devices_ = RowInserter<DeviceRow>(db_, OnConflict::Replace);
  kernels_ = BatchInserter<KernelRow>(db_);
  kernels_again_ = RowInserter<KernelRow>(db_, OnConflict::Replace);
  memcpys_ = BatchInserter<MemcpyRow>(db_);
  memcpys_again_ = RowInserter<MemcpyRow>(db_, OnConflict::Replace);
  memsets_ = BatchInserter<MemsetRow>(db_);
  memsets_again_ = RowInserter<MemsetRow>(db_, OnConflict::Replace);
  graph_node_rows_ = RowInserter<GraphNodeRow>(db_);
  nvtx_ranges_ = BatchInserter<NvtxRangeRow>(db_);
  insert_thread_ = db_.prepare(
      "INSERT INTO threads (tid, name, first_seen_ns) VALUES (?,?,?)"
      " ON CONFLICT(tid) DO UPDATE SET name = excluded.name");
  insert_string_ = db_.prepare("INSERT OR REPLACE INTO strings (id, text) VALUES (?,?)");
  upsert_meta_ = db_.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES (?,?)");
  update_free_ = db_.prepare(
      "UPDATE allocations SET free_correlation_id = ?, free_ns = ? WHERE id = ?");
  set_node_template_ = db_.prepare("UPDATE graph_nodes SET template_node_id = ? WHERE node_id = ?");

  kernel_join_ = std::make_unique<ActivityJoin<KernelRow, KernelTraits>>(
      options.hold_passes, options.late_passes, [this](KernelRow& row, bool again) {
        if (!again && row.launch_kind == LaunchKind::Graph) fill_from_graph_node(row);
        if (!row.demangled_id && row.name_id) {
          row.demangled_id = signatures_.demangled_id(static_cast<uint32_t>(*row.name_id));
        }
        store_row(row, again, kernels_, kernels_again_, next_kernel_id_);
      },
      row_loader(db_, kernels_));
  memcpy_join_ = std::make_unique<ActivityJoin<MemcpyRow, MemcpyTraits>>(
      options.hold_passes, options.late_passes, [this](MemcpyRow& row, bool again) {
        if (!again && row.graph_node_id && !row.src_address) fill_from_graph_node(row);
        store_row(row, again, memcpys_, memcpys_again_, next_memcpy_id_);
      },
      row_loader(db_, memcpys_));
  memset_join_ = std::make_unique<ActivityJoin<MemsetRow, MemsetTraits>>(
      options.hold_passes, options.late_passes, [this](MemsetRow& row, bool again) {
        if (!again && row.graph_node_id && !row.address) fill_from_graph_node(row);
        store_row(row, again, memsets_, memsets_again_, next_memset_id_);
      },
      row_loader(db_, memsets_));
}

TraceStore::~TraceStore() = default;

void TraceStore::begin() { db_.exec("BEGIN"); }
void TraceStore::commit() { db_.exec("COMMIT"); }

void TraceStore::write_string(uint32_t id, const std::string& text) {
  insert_string_.bind(1, static_cast<int64_t>(id)).bind(2, text).run();
}

void TraceStore::write_device(const DeviceInfo& d) {
  DeviceRow row;
  row.id = d.ordinal;
  row.name = d.name;
  row.uuid = d.uuid;
  row.pci_bus_id = d.pci_bus_id;
  row.cc_major = d.cc_major;
  row.cc_minor = d.cc_minor;
  row.total_memory_bytes = as_int(d.total_memory_bytes);
  row.sm_count = d.sm_count;
  row.numa_node = d.numa_node;
  devices_.insert(row);
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
      case RecordType::KernelArgs: write_kernel_args(r); break;
      case RecordType::Sync: write_sync(r); break;
      case RecordType::StreamEvent: write_stream_event(r); break;
      case RecordType::Stream: write_stream(r); break;
      case RecordType::Thread: write_thread(r); break;
      case RecordType::MemAdvice: write_mem_advice(r); break;
      case RecordType::UmEvent: write_um_event(r); break;
      case RecordType::SubAllocation: sub_allocations_->write(r); break;
      case RecordType::ExactLaunch: exact_rows_->write_launch(r); break;
      case RecordType::ExactIntervals: exact_rows_->write_intervals(r); break;
      case RecordType::GraphNode: write_graph_node(r); break;
      case RecordType::Nvtx: write_nvtx(r); break;
      case RecordType::GpuKernel:
      case RecordType::GpuMemcpy:
      case RecordType::GpuMemset: write_activity(r); break;
      case RecordType::Communicator:
      case RecordType::Collective:
      case RecordType::CollectivePlan:
      case RecordType::CollectiveDone:
      case RecordType::NcclLaunch: collectives_->write(r); break;
    }
  }
}

int64_t TraceStore::api_name_id(const char* name) {
  auto& id = api_name_ids_[name];
  if (id == 0) id = strings_.intern(name ? name : "?");
  return id;
}

void TraceStore::write_api_call(const Record& r) {
  const ApiCallRecord& a = r.api;
  ApiCallRow row;
  row.correlation_id = r.own_correlation_id;
  row.parent_correlation_id = optional_nonzero(a.parent_correlation_id);
  row.domain = a.domain;
  row.cbid = a.cbid;
  row.name_id = api_name_id(a.name);
  row.tid = r.tid;
  row.start_ns = as_int(a.start_ns);
  row.end_ns = as_int(a.end_ns);
  row.return_code = a.return_code;
  row.device = optional_device(a.device);
  row.stream = optional_stream(a.stream);
  if (a.driver_name) row.driver_name_id = api_name_id(a.driver_name);
  api_calls_.add(row);
  if (is_graph_launch(a)) graph_nodes_.add_launch(r.correlation_id, a.start_ns);
}

void TraceStore::write_promoted_block(const PromotedBlock& block) {
  if (!block.free_ns) {
    write_allocation(block.allocation);
    return;
  }
  // Freed before the writer saw the touch: its pages are gone, so where
  // they were comes from the free, and the free comes with the row.
  pending_frees_[block.allocation.allocation.alloc_id] = PendingFree{std::nullopt, block.free_ns};
  write_allocation(block.allocation, block.numa_node);
}

void TraceStore::write_allocation(const Record& r, std::optional<int> numa_node_at_free) {
  const AllocationRecord& a = r.allocation;
  // Registering a block the program allocated makes that block a row too:
  // the registered row is CUDA's view of the same memory.
  if (a.kind == AllocKind::RegisteredHost) resolver_.touch_host_block(a.address, a.ns);
  AllocationRow row;
  row.id = as_int(a.alloc_id);
  row.kind = a.kind;
  row.address = as_int(a.address);
  row.bytes = as_int(a.bytes);
  row.device = optional_device(a.device);
  row.flags = a.flags;
  row.pitch = optional_nonzero(a.pitch);
  row.alloc_correlation_id = optional_nonzero(r.own_correlation_id);
  row.alloc_ns = as_int(a.ns);
  row.alloc_tid = static_cast<int64_t>(a.alloc_tid ? a.alloc_tid : r.tid);
  // Host memory: where its pages are, read here rather than on the
  // program's thread (a system call). Page-locked memory cannot move.
  MemoryKind memory = memory_kind_of(a.kind);
  if (is_host_memory(memory)) {
    int node = a.numa_node_plus_one > 0 ? a.numa_node_plus_one - 1
               : numa_node_at_free    ? *numa_node_at_free
                                      : numa_node_of(a.address, a.bytes);
    if (node >= 0) row.numa_node = node;
    resolver_.remember_numa_node(a.alloc_id, node);
  }
  auto pending = pending_frees_.find(a.alloc_id);
  if (pending != pending_frees_.end()) {
    row.free_correlation_id = pending->second.correlation_id;
    row.free_ns = as_int(pending->second.ns);
    pending_frees_.erase(pending);
  }
  allocations_.insert(row);
}

void TraceStore::write_free(const Record& r) {
  std::optional<int64_t> correlation = optional_nonzero(r.own_correlation_id);
  update_free_.bind(1, correlation)
      .bind(2, as_int(r.free.ns))
      .bind(3, as_int(r.free.alloc_id))
      .run();
  if (db_.changes() == 0) pending_frees_[r.free.alloc_id] = PendingFree{correlation, r.free.ns};
}

void TraceStore::write_memcpy(const Record& r) {
  const MemcpyRecord& m = r.memcpy;
  uint64_t ns = m.api_start_ns;
  auto endpoint = [&](uint64_t address, bool source) {
    return may_be_host(m.kind, source) ? resolver_.touch(address, ns) : resolver_.find(address, ns);
  };
  Resolved src = endpoint(m.src, true);
  Resolved dst = endpoint(m.dst, false);
  // An unresolved endpoint on the host side of a known direction is pageable
  // (or memory we do not see); on the device side it stays unknown.
  if (!src.alloc_id && (m.kind == CopyKind::HtoD || m.kind == CopyKind::HtoH)) {
    src.memory = MemoryKind::Pageable;
  }
  if (!dst.alloc_id && (m.kind == CopyKind::DtoH || m.kind == CopyKind::HtoH)) {
    dst.memory = MemoryKind::Pageable;
  }
  if (m.kind == CopyKind::Prefetch) {
    // The managed range moves to where the call said (the host: no device),
    // from wherever its pages were, which the call does not say.
    src.device = std::nullopt;
    dst.device = std::nullopt;
  }
  // Host memory in no allocation (the stack, small blocks): where its pages are now.
  auto numa_node = [&](const Resolved& at, uint64_t address, uint64_t pitch, bool source) {
    if (at.alloc_id) return is_host_memory(at.memory) ? at.numa_node : std::nullopt;
    if (!may_be_host(m.kind, source) || address == 0) return std::optional<int64_t>();
    int node = numa_node_of(address, m.height ? m.height * pitch : m.bytes);
    return node >= 0 ? std::optional<int64_t>(node) : std::nullopt;
  };
  MemcpyRow row;
  row.call_correlation_id = optional_nonzero(r.correlation_id);
  row.kind = m.kind == CopyKind::Unknown ? infer_copy_kind(src.memory, dst.memory) : m.kind;
  row.src_address = as_int(m.src);
  row.dst_address = as_int(m.dst);
  row.bytes = as_int(m.bytes);
  row.src_alloc_id = src.alloc_id;
  row.dst_alloc_id = dst.alloc_id;
  row.src_offset = src.offset;
  row.dst_offset = dst.offset;
  row.src_memory = src.memory;
  row.dst_memory = dst.memory;
  row.src_device = m.src_device >= 0 ? std::optional<int64_t>(m.src_device) : src.device;
  row.dst_device = m.dst_device >= 0 ? std::optional<int64_t>(m.dst_device) : dst.device;
  row.src_numa_node = numa_node(src, m.src, m.src_pitch, true);
  row.dst_numa_node = numa_node(dst, m.dst, m.dst_pitch, false);
  row.stream = optional_stream(m.stream);
  row.is_async = m.is_async;
  row.width = optional_nonzero(m.width);
  row.height = optional_nonzero(m.height);
  row.src_pitch = optional_nonzero(m.src_pitch);
  row.dst_pitch = optional_nonzero(m.dst_pitch);
  row.api_start_ns = as_int(m.api_start_ns);
  if (row.dst_memory == MemoryKind::Pageable && m.dst_pages_mapped > 0) {
    row.dst_sampled_pages = m.dst_pages_mapped;
    row.dst_untouched_pages = m.dst_pages_untouched;
  }
  // A prefetch moves pages through the unified-memory driver: CUPTI reports
  // it as um_events, never as copy activity.
  if (m.kind == CopyKind::Prefetch) {
    row.id = next_memcpy_id_++;
    memcpys_.add(row);
    return;
  }
  memcpy_join_->add_row(std::move(row), r.correlation_id, r.own_correlation_id);
}

void TraceStore::write_memset(const Record& r) {
  const MemsetRecord& s = r.memset;
  Resolved target = resolver_.find(s.address, s.api_start_ns);
  MemsetRow row;
  row.call_correlation_id = optional_nonzero(r.correlation_id);
  row.address = optional_nonzero(s.address);
  row.bytes = as_int(s.bytes);
  row.value = s.value;
  row.element_size = s.element_size;
  row.alloc_id = target.alloc_id;
  row.alloc_offset = target.offset;
  row.memory = target.memory;
  row.device = target.device;
  row.is_async = s.is_async;
  row.api_start_ns = optional_nonzero(s.api_start_ns);
  memset_join_->add_row(std::move(row), r.correlation_id, r.own_correlation_id);
}

void TraceStore::write_kernel(const Record& r) {
  const KernelRecord& k = r.kernel;
  KernelRow row;
  row.call_correlation_id = optional_nonzero(r.correlation_id);
  if (k.name_id) {
    row.name_id = k.name_id;
    row.demangled_id = signatures_.demangled_id(k.name_id);
  }
  row.launch_kind = k.launch_kind;
  row.device = optional_device(k.device);
  copy_launch_columns(k.launch, row);
  row.function_handle = optional_nonzero(k.function_handle);
  row.api_start_ns = optional_nonzero(k.api_start_ns);
  if (k.args_captured) {
    LaunchArgs& args = launch_args_[r.tid];
    // A launch whose words never came (cut off) is stored as it is.
    if (args.own_correlation_id) {
      kernel_join_->update(args.outer_correlation_id, [](KernelRow&) {}, true);
    }
    args.own_correlation_id = r.own_correlation_id;
    args.outer_correlation_id = r.correlation_id;
    args.name_id = k.name_id;
    args.api_start_ns = k.api_start_ns;
    args.words.clear();
  }
  kernel_join_->add_row(std::move(row), r.correlation_id, r.own_correlation_id, k.args_captured);
  collectives_->kernel_launched(r);
}

std::optional<KernelArgWordRow> TraceStore::argument_row(uint32_t name_id,
                                                         const KernelArgWord& word, uint64_t ns) {
  std::optional<KernelSignatures::Access> access = signatures_.access_of(name_id, word.param_index);
  if (!access) return std::nullopt;
  // Pageable memory a kernel touches first (systems where GPUs read host
  // memory directly) becomes a row now.
  Resolved target = resolver_.touch(word.value, ns);
  // A word in no allocation is a number that looked like an address (packed
  // integers, floats, host pointers into nothing traced: 68% of a PyTorch
  // MLP's words): nothing reads it, and it kept launches from sharing sets.
  if (!target.alloc_id) return std::nullopt;
  KernelArgWordRow row;
  if (word.param_index != UINT16_MAX) row.param_index = word.param_index;
  row.offset = word.offset;
  row.size = word.param_size;
  row.raw_value = as_int(word.value);
  row.alloc_id = target.alloc_id;
  row.alloc_offset = target.offset;
  row.access = access->kind;
  row.access_source = access->source;
  return row;
}

void TraceStore::write_kernel_args(const Record& r) {
  auto node = node_args_.find(r.tid);
  if (node != node_args_.end() && node->second.node_id &&
      node->second.own_correlation_id == r.own_correlation_id) {
    graph_nodes_.add_words(node->second.node_id, r.kernel_args);
    if (r.kernel_args.last) node->second.node_id = 0;
    return;
  }
  auto launch = launch_args_.find(r.tid);
  if (launch == launch_args_.end() || launch->second.own_correlation_id != r.own_correlation_id) {
    return;
  }
  LaunchArgs& args = launch->second;
  const KernelArgsRecord& record = r.kernel_args;
  for (int i = 0; i < record.count && i < KernelArgsRecord::kWords; ++i) {
    std::optional<KernelArgWordRow> row =
        argument_row(args.name_id, record.words[i], args.api_start_ns);
    if (row) args.words.push_back(*row);
  }
  if (!record.last) return;
  int64_t set_id = arg_sets_->id_of(args.words);
  kernel_join_->update(
      args.outer_correlation_id, [set_id](KernelRow& row) { row.arg_set_id = set_id; }, true);
  args.own_correlation_id = 0;
}

void TraceStore::write_graph_node(const Record& r) {
  const GraphNodeRecord& n = r.graph_node;
  bool is_new = graph_nodes_.add(n);
  if (n.has_params && n.type == GraphNodeType::Kernel && n.params.kernel.args_captured) {
    node_args_[r.tid] = NodeArgs{n.node_id, r.own_correlation_id};
  }
  if (n.event == GraphNodeEvent::Cloned && !is_new) {
    set_node_template_.bind(1, optional_nonzero(n.template_node_id))
        .bind(2, as_int(n.node_id))
        .run();
  }
  if (!is_new || n.event == GraphNodeEvent::ParamsSet) return;
  GraphNodeRow row;
  row.node_id = as_int(n.node_id);
  row.graph_id = n.graph_id;
  row.template_node_id = optional_nonzero(n.template_node_id);
  row.type = n.type;
  row.captured = n.captured;
  row.call_correlation_id = optional_nonzero(r.correlation_id);
  row.create_ns = as_int(n.ns);
  graph_node_rows_.insert(row);
}

std::optional<uint64_t> TraceStore::graph_launch_start(
    const std::optional<int64_t>& correlation_id) const {
  if (!correlation_id) return std::nullopt;
  return graph_nodes_.launch_start(static_cast<uint32_t>(*correlation_id));
}

// Addresses resolve at the graph launch's call, like those of work launched
// directly; without it (a launch not seen), when the GPU started the work.
void TraceStore::fill_from_graph_node(KernelRow& row) {
  std::optional<uint64_t> start = graph_launch_start(row.call_correlation_id);
  if (start) row.api_start_ns = as_int(*start);
  uint64_t ns = start.value_or(static_cast<uint64_t>(row.gpu_start_ns.value_or(0)));
  const GraphNodes::Params* node =
      row.graph_node_id
          ? graph_nodes_.parameters_of(static_cast<uint64_t>(*row.graph_node_id), ns)
          : nullptr;
  if (!node || node->record.type != GraphNodeType::Kernel) return;
  const KernelNodeParams& k = node->record.params.kernel;
  row.function_handle = optional_nonzero(k.function_handle);
  if (!row.name_id && k.name_id) row.name_id = k.name_id;
  if (!k.args_captured || !node->words_complete) return;
  std::vector<KernelArgWordRow> words;
  for (const KernelArgWord& word : node->words) {
    std::optional<KernelArgWordRow> resolved = argument_row(k.name_id, word, ns);
    if (resolved) words.push_back(*resolved);
  }
  row.arg_set_id = arg_sets_->id_of(words);
}

void TraceStore::fill_from_graph_node(MemcpyRow& row) {
  std::optional<uint64_t> start = graph_launch_start(row.call_correlation_id);
  uint64_t ns = start.value_or(static_cast<uint64_t>(row.api_start_ns.value_or(0)));
  const GraphNodes::Params* node =
      graph_nodes_.parameters_of(static_cast<uint64_t>(*row.graph_node_id), ns);
  if (!node || node->record.type != GraphNodeType::Memcpy) return;
  const CopyNodeParams& c = node->record.params.copy;
  if (start) row.api_start_ns = as_int(*start);
  CopyKind kind = row.kind == CopyKind::Unknown ? c.kind : row.kind;
  auto endpoint = [&](uint64_t address, bool source) {
    return may_be_host(kind, source) ? resolver_.touch(address, ns) : resolver_.find(address, ns);
  };
  Resolved src = endpoint(c.src, true);
  Resolved dst = endpoint(c.dst, false);
  row.src_address = optional_nonzero(c.src);
  row.dst_address = optional_nonzero(c.dst);
  row.src_alloc_id = src.alloc_id;
  row.dst_alloc_id = dst.alloc_id;
  row.src_offset = src.offset;
  row.dst_offset = dst.offset;
  if (!row.src_device) row.src_device = src.device;
  if (!row.dst_device) row.dst_device = dst.device;
}

void TraceStore::fill_from_graph_node(MemsetRow& row) {
  std::optional<uint64_t> start = graph_launch_start(row.call_correlation_id);
  uint64_t ns = start.value_or(static_cast<uint64_t>(row.api_start_ns.value_or(0)));
  const GraphNodes::Params* node =
      graph_nodes_.parameters_of(static_cast<uint64_t>(*row.graph_node_id), ns);
  if (!node || node->record.type != GraphNodeType::Memset) return;
  const MemsetNodeParams& m = node->record.params.memset;
  if (start) row.api_start_ns = as_int(*start);
  Resolved target = resolver_.find(m.address, ns);
  row.address = optional_nonzero(m.address);
  row.alloc_id = target.alloc_id;
  row.alloc_offset = target.offset;
  row.value = m.value;
  row.element_size = m.element_size;
}

void TraceStore::write_sync(const Record& r) {
  const SyncRecord& s = r.sync;
  SyncRow row;
  row.call_correlation_id = optional_nonzero(r.correlation_id);
  row.kind = s.kind;
  row.device = optional_device(s.device);
  row.stream = optional_stream(s.stream);
  row.event_handle = optional_nonzero(s.event_handle);
  row.tid = r.tid;
  row.start_ns = as_int(s.start_ns);
  row.end_ns = as_int(s.end_ns);
  syncs_.add(row);
}

void TraceStore::write_stream(const Record& r) {
  const StreamRecord& s = r.stream;
  StreamRow row;
  row.stream = s.stream;
  row.context_id = s.context_id;
  row.kind = s.kind;
  row.priority = s.priority;
  row.call_correlation_id = optional_nonzero(r.correlation_id);
  streams_.add(row);
}

void TraceStore::write_stream_event(const Record& r) {
  const StreamEventRecord& e = r.stream_event;
  StreamEventRow row;
  row.call_correlation_id = optional_nonzero(r.correlation_id);
  row.kind = e.kind;
  row.event_handle = as_int(e.event_handle);
  row.stream = optional_stream(e.stream);
  row.device = optional_device(e.device);
  row.ns = as_int(e.ns);
  stream_events_.add(row);
}

void TraceStore::write_thread(const Record& r) {
  std::string name(r.thread.name, strnlen(r.thread.name, sizeof r.thread.name));
  insert_thread_.bind(1, static_cast<int64_t>(r.tid))
      .bind(2, name)
      .bind(3, as_int(r.thread.ns))
      .run();
}

void TraceStore::write_mem_advice(const Record& r) {
  mem_advice_.add(mem_advice_row(r, resolver_.find(r.mem_advice.address, r.mem_advice.ns)));
}

// Addresses in no allocation stay unresolved: `__managed__` variables, for
// one, are managed memory that no allocation call created.
void TraceStore::write_um_event(const Record& r) {
  um_events_.add(um_event_row(r, resolver_.find(r.um_event.address, r.um_event.start_ns)));
}

void TraceStore::write_nvtx(const Record& r) {
  if (std::optional<NvtxRangeRow> row = nvtx_rows_.add(r)) nvtx_ranges_.add(*row);
}

void TraceStore::write_activity(const Record& r) {
  switch (r.type) {
    case RecordType::GpuKernel: kernel_join_->add_activity(r); break;
    case RecordType::GpuMemcpy: memcpy_join_->add_activity(r); break;
    case RecordType::GpuMemset: memset_join_->add_activity(r); break;
    default: break;
  }
}

void TraceStore::end_pass() {
  kernel_join_->end_pass();
  memcpy_join_->end_pass();
  memset_join_->end_pass();
  collectives_->end_pass();
  flush_batches();
}

void TraceStore::flush_batches() {
  api_calls_.flush();
  syncs_.flush();
  stream_events_.flush();
  streams_.flush();
  mem_advice_.flush();
  um_events_.flush();
  nvtx_ranges_.flush();
  kernels_.flush();
  memcpys_.flush();
  memsets_.flush();
  exact_rows_->flush();
}

bool TraceStore::waiting_for_activity() const {
  return kernel_join_->waiting() || memcpy_join_->waiting() || memset_join_->waiting();
}

void TraceStore::store_waiting() {
  // Launches whose argument records never came are stored as they are.
  for (auto& [tid, args] : launch_args_) {
    if (args.own_correlation_id) kernel_join_->update(args.outer_correlation_id, [](KernelRow&) {}, true);
    args.own_correlation_id = 0;
  }
  kernel_join_->finish();
  memcpy_join_->finish();
  memset_join_->finish();
  for (const NvtxRangeRow& open : nvtx_rows_.take_open()) nvtx_ranges_.add(open);
  flush_batches();
}

std::vector<std::pair<std::string, int64_t>> TraceStore::finish() {
  store_waiting();
  sub_allocations_->finish();
  for (const auto& [key, value] : exact_rows_->finish()) set_meta(key, value);
  collectives_->finish();
  db_.exec(trace_indexes_sql());
  std::vector<std::pair<std::string, int64_t>> counts;
  for (const TableInfo* table : tables_with_role(TableRole::Trace)) {
    Statement count = db_.prepare("SELECT count(*) FROM " + table->name);
    count.step();
    counts.emplace_back(table->name, count.int64(0));
  }
  return counts;
}

void TraceStore::checkpoint() {
  // Back to a rollback journal: readers then need no -wal/-shm files beside it.
  db_.exec("PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode=DELETE;");
}

}  // namespace apptracer
