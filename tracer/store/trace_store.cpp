#include "store/trace_store.h"

#include <cstring>
#include <memory>

#include "apptracer/schema.h"
#include "base/self_cost.h"
#include "store/row_values.h"
#include "store/um_rows.h"

namespace apptracer {

namespace {

// Where a record's writing is counted under --self-cost.
self_cost::Site writer_site(RecordType type) {
  switch (type) {
    case RecordType::ApiCall: return self_cost::Site::WriterApiCalls;
    case RecordType::Allocation:
    case RecordType::Free: return self_cost::Site::WriterAllocations;
    case RecordType::Kernel: return self_cost::Site::WriterLaunches;
    case RecordType::KernelArgs: return self_cost::Site::WriterArguments;
    case RecordType::GpuKernel: return self_cost::Site::WriterKernelActivity;
    case RecordType::Memcpy:
    case RecordType::Memset:
    case RecordType::GpuMemcpy:
    case RecordType::GpuMemset: return self_cost::Site::WriterCopies;
    case RecordType::SubAllocation: return self_cost::Site::WriterTensorBlocks;
    default: return self_cost::Site::WriterOther;
  }
}

}  // namespace

TraceStore::TraceStore(const std::string& path, const AllocationRegistry& registry,
                       StringTable& strings, HostBlockResolution host, StoreOptions options,
                       InsertThread* insert_thread)
    : db_(path, Database::Mode::Create),
      strings_(strings),
      resolver_(registry, std::move(host),
                [this](const PromotedBlock& block) { allocations_->write_promoted_block(block); }),
      signatures_(strings) {
  db_.use_insert_thread(insert_thread);
  // WAL: a crash or SIGKILL leaves every committed pass readable.
  // synchronous=OFF: what SQLite wrote is in the OS's page cache when the
  // program dies, so the trace survives the program's death with no fsync;
  // only the machine's crash could tear it, which no trace is worth an fsync
  // per checkpoint for (10% of the writer's throughput).
  // A large page cache and rare checkpoints (every 64 MiB of log) keep
  // SQLite from re-reading and re-writing pages while the program runs;
  // finish() checkpoints once. 16 KiB pages (set before the first table)
  // split B-tree pages a quarter as often as 4 KiB ones as rows are
  // appended: 7% more records a second, and the analyzer reads them as fast.
  db_.exec(
      "PRAGMA page_size=16384; PRAGMA journal_mode=WAL; PRAGMA synchronous=OFF;"
      " PRAGMA cache_size=-65536; PRAGMA wal_autocheckpoint=4096; PRAGMA temp_store=MEMORY;");
  with_transaction(db_, [&] {
    db_.exec(trace_tables_sql());
    db_.exec(std::string("INSERT INTO meta VALUES ('status', '") + kStatusRecording + "')");
  });
  api_calls_ = std::make_unique<ApiCallRows>(db_, strings_);
  allocations_ = std::make_unique<AllocationRows>(db_, resolver_);
  kernels_ = std::make_unique<KernelRows>(db_, resolver_, signatures_, graph_nodes_,
                                          options.activity);
  memcpys_ = std::make_unique<MemcpyRows>(db_, resolver_, graph_nodes_, options.activity);
  memsets_ = std::make_unique<MemsetRows>(db_, resolver_, graph_nodes_, options.activity);
  sub_allocations_ = std::make_unique<SubAllocationRows>(
      db_, resolver_, [this](const std::string& key, const std::string& value) { set_meta(key, value); });
  exact_rows_ = std::make_unique<ExactRows>(db_, resolver_);
  collectives_ = std::make_unique<CollectiveRows>(db_, resolver_, options.activity.hold_passes,
                                                  options.activity.late_passes);
  syncs_ = BatchInserter<SyncRow>(db_);
  stream_events_ = BatchInserter<StreamEventRow>(db_);
  streams_ = BatchInserter<StreamRow>(db_);
  mem_advice_ = BatchInserter<MemAdviceRow>(db_);
  um_events_ = BatchInserter<UmEventRow>(db_);
  nvtx_ranges_ = BatchInserter<NvtxRangeRow>(db_);
  framework_ranges_ = BatchInserter<FrameworkRangeRow>(db_);
  nccl_groups_ = BatchInserter<NcclGroupRow>(db_);
  devices_ = RowInserter<DeviceRow>(db_, OnConflict::Replace);
  tracer_time_ = RowInserter<TracerTimeRow>(db_);
  graph_node_rows_ = RowInserter<GraphNodeRow>(db_);
  insert_thread_ = db_.prepare(
      "INSERT INTO threads (tid, name, first_seen_ns) VALUES (?,?,?)"
      " ON CONFLICT(tid) DO UPDATE SET name = excluded.name");
  insert_string_ = db_.prepare("INSERT OR REPLACE INTO strings (id, text) VALUES (?,?)");
  upsert_meta_ = db_.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES (?,?)");
  set_node_template_ = db_.prepare("UPDATE graph_nodes SET template_node_id = ? WHERE node_id = ?");
}

TraceStore::~TraceStore() = default;

void TraceStore::begin() { db_.exec("BEGIN"); }

bool TraceStore::try_begin(std::chrono::milliseconds wait) {
  // BEGIN IMMEDIATE takes the write lock now or begins nothing, so another
  // connection's lock never stops a pass halfway through its rows. It waits
  // `wait` for it, then the connection waits as long as every other does
  // (the final checkpoint may meet a reader).
  constexpr int kConnectionWaitMs = 5000;
  sqlite3* db = db_.handle();
  sqlite3_busy_timeout(db, static_cast<int>(wait.count()));
  int result = sqlite3_exec(db, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr);
  sqlite3_busy_timeout(db, kConnectionWaitMs);
  if ((result & 0xff) == SQLITE_BUSY) return false;
  if (result != SQLITE_OK) throw SqliteError(std::string("cannot begin: ") + sqlite3_errmsg(db));
  return true;
}

void TraceStore::commit() {
  self_cost::Timer timer(self_cost::Site::WriterCommit);
  db_.exec("COMMIT");
}

void TraceStore::roll_back() {
  if (!sqlite3_get_autocommit(db_.handle())) db_.exec("ROLLBACK");
}

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
  if (d.pageable_memory_access >= 0) row.pageable_memory_access = d.pageable_memory_access;
  devices_.insert(row);
  // Kernels may touch pageable memory unless every device says they cannot.
  every_device_refuses_pageable_ = every_device_refuses_pageable_ && d.pageable_memory_access == 0;
  kernels_->set_kernels_read_pageable(!every_device_refuses_pageable_);
}

void TraceStore::write_tracer_time(const TracerTimeRow& row) { tracer_time_.insert(row); }

void TraceStore::set_meta(const std::string& key, const std::string& value) {
  upsert_meta_.bind(1, key).bind(2, value).run();
}

void TraceStore::write(const Record* records, size_t count) {
  for (size_t i = 0; i < count; ++i) {
    const Record& r = records[i];
    self_cost::Timer timer(writer_site(r.type));
    switch (r.type) {
      case RecordType::ApiCall:
        api_calls_->write(r);
        if (is_graph_launch(r.api)) graph_nodes_.add_launch(r.correlation_id, r.api.start_ns);
        break;
      case RecordType::Allocation: allocations_->write_allocation(r); break;
      case RecordType::Free: allocations_->write_free(r); break;
      case RecordType::Memcpy: memcpys_->write_call(r); break;
      case RecordType::Memset: memsets_->write_call(r); break;
      case RecordType::Kernel:
        kernels_->write_launch(r);
        collectives_->kernel_launched(r);
        break;
      case RecordType::KernelArgs: write_kernel_args(r); break;
      case RecordType::Sync: syncs_.add(sync_row(r)); break;
      case RecordType::StreamEvent: stream_events_.add(stream_event_row(r)); break;
      case RecordType::Stream: streams_.add(stream_row(r)); break;
      case RecordType::Thread: write_thread(r); break;
      // Addresses in no allocation stay unresolved: `__managed__` variables,
      // for one, are managed memory that no allocation call created.
      case RecordType::MemAdvice:
        mem_advice_.add(mem_advice_row(r, resolver_.find(r.mem_advice.address, r.mem_advice.ns)));
        break;
      case RecordType::UmEvent:
        um_events_.add(um_event_row(r, resolver_.find(r.um_event.address, r.um_event.start_ns)));
        break;
      case RecordType::SubAllocation: sub_allocations_->write(r); break;
      case RecordType::ExactLaunch: exact_rows_->write_launch(r); break;
      case RecordType::ExactIntervals: exact_rows_->write_intervals(r); break;
      case RecordType::GraphNode: write_graph_node(r); break;
      case RecordType::Nvtx:
        if (std::optional<NvtxRangeRow> row = nvtx_rows_.add(r)) nvtx_ranges_.add(*row);
        break;
      case RecordType::FrameworkRange: framework_ranges_.add(framework_range_row(r)); break;
      case RecordType::GpuKernel: kernels_->write_activity(r); break;
      case RecordType::GpuMemcpy: memcpys_->write_activity(r); break;
      case RecordType::GpuMemset: memsets_->write_activity(r); break;
      case RecordType::Communicator:
      case RecordType::Collective:
      case RecordType::CollectivePlan:
      case RecordType::CollectiveDone:
      case RecordType::NcclLaunch: collectives_->write(r); break;
      case RecordType::NcclGroup: nccl_groups_.add(nccl_group_row(r)); break;
    }
  }
}

void TraceStore::write_kernel_args(const Record& r) {
  auto node = node_args_.find(r.tid);
  if (node != node_args_.end() && node->second.node_id &&
      node->second.own_correlation_id == r.own_correlation_id) {
    graph_nodes_.add_words(node->second.node_id, r.kernel_args);
    if (r.kernel_args.last) node->second.node_id = 0;
    return;
  }
  kernels_->write_args(r);
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

void TraceStore::write_thread(const Record& r) {
  std::string name(r.thread.name, strnlen(r.thread.name, sizeof r.thread.name));
  insert_thread_.bind(1, static_cast<int64_t>(r.tid))
      .bind(2, name)
      .bind(3, as_int(r.thread.ns))
      .run();
}

void TraceStore::end_pass(uint64_t drained_before) {
  self_cost::Timer timer(self_cost::Site::WriterPassEnd);
  kernels_->end_pass(drained_before);
  memcpys_->end_pass(drained_before);
  memsets_->end_pass(drained_before);
  collectives_->end_pass();
  flush_batches(drained_before);
}

void TraceStore::flush_batches(uint64_t drained_before) {
  allocations_->end_pass();
  api_calls_->flush();
  syncs_.flush();
  stream_events_.flush();
  streams_.flush();
  mem_advice_.flush();
  um_events_.flush();
  nvtx_ranges_.flush();
  framework_ranges_.flush();
  nccl_groups_.flush();
  kernels_->flush();
  memcpys_->flush();
  memsets_->flush();
  sub_allocations_->end_pass(drained_before);
  exact_rows_->flush();
}

bool TraceStore::waiting_for_activity() const {
  return kernels_->waiting() || memcpys_->waiting() || memsets_->waiting();
}

void TraceStore::store_waiting() {
  kernels_->store_waiting();
  memcpys_->store_waiting();
  memsets_->store_waiting();
  for (const NvtxRangeRow& open : nvtx_rows_.take_open()) nvtx_ranges_.add(open);
  // The program is ending: no record is still to come.
  flush_batches(UINT64_MAX);
}

std::vector<std::pair<std::string, int64_t>> TraceStore::finish() {
  store_waiting();
  sub_allocations_->finish();
  for (const auto& [key, value] : exact_rows_->finish()) set_meta(key, value);
  collectives_->finish();
  set_meta("rows_stored_again", std::to_string(kernels_->stored_again() +
                                               memcpys_->stored_again() +
                                               memsets_->stored_again()));
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
