// Turns records into rows of the trace database (tables.def), on the writer
// thread only, each table's rows built in a file of its own: calls
// (call_rows), allocations (allocation_rows), kernels (kernel_rows, with
// kernel_signatures and kernel_arg_sets), copies (memcpy_rows), memsets
// (memset_rows), unified memory (um_rows), NVTX ranges (nvtx_rows),
// framework ranges (framework_range_rows),
// framework allocators' blocks (sub_allocation_rows), --exact rows
// (exact_rows) and NCCL / MPI operations (collective_rows). Addresses
// resolve in address_resolver; GPU activity joins its call in activity_join.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "apptracer/row_inserter.h"
#include "base/device_info.h"
#include "store/address_resolver.h"
#include "store/allocation_rows.h"
#include "store/call_rows.h"
#include "store/collective_rows.h"
#include "store/exact_rows.h"
#include "store/framework_range_rows.h"
#include "store/graph_nodes.h"
#include "store/kernel_rows.h"
#include "store/kernel_signatures.h"
#include "store/memcpy_rows.h"
#include "store/memset_rows.h"
#include "store/nvtx_rows.h"
#include "store/sub_allocation_rows.h"

namespace apptracer {

struct StoreOptions {
  // How long rows wait for their GPU activity.
  ActivityWait activity;
};

class TraceStore {
 public:
  // Creates the database at `path` (which must not exist) with the schema,
  // in WAL mode, with meta.status = incomplete. Addresses resolve in
  // `registry` (CUDA's allocations) first, then in host blocks. Full
  // batches of rows run on `insert_thread` where one is given (it outlives
  // the store).
  TraceStore(const std::string& path, const AllocationRegistry& registry, StringTable& strings,
             HostBlockResolution host = {}, StoreOptions options = {},
             InsertThread* insert_thread = nullptr);
  ~TraceStore();

  void begin();
  // Begins with the write lock taken, waiting at most `wait` for another
  // connection that holds it: false, with nothing begun, while it does.
  bool try_begin(std::chrono::milliseconds wait);
  void commit();
  // Undoes the transaction a failed write left open, if one is.
  void roll_back();

  void write(const Record* records, size_t count);
  void write_string(uint32_t id, const std::string& text);
  void write_device(const DeviceInfo& device);
  void write_tracer_time(const TracerTimeRow& row);
  void set_meta(const std::string& key, const std::string& value);

  // Once per writer pass, inside its transaction: every thread's records
  // from before drained_before have been written.
  void end_pass(uint64_t drained_before);
  // Whether rows have been waiting a whole pass for their GPU activity.
  bool waiting_for_activity() const;

  // Stores every row still waiting for its activity as it is (the process
  // is dying).
  void store_waiting();

  // Stores everything still held back, creates the indexes and returns
  // per-table row counts.
  std::vector<std::pair<std::string, int64_t>> finish();

  // Moves the WAL into the main file so the trace is one self-contained file.
  void checkpoint();

 private:
  void write_kernel_args(const Record& r);
  void write_thread(const Record& r);
  void write_graph_node(const Record& r);
  void flush_batches(uint64_t drained_before);

  Database db_;
  StringTable& strings_;
  AddressResolver resolver_;
  KernelSignatures signatures_;
  GraphNodes graph_nodes_;
  // Made once the schema exists (they prepare their statements).
  std::unique_ptr<ApiCallRows> api_calls_;
  std::unique_ptr<AllocationRows> allocations_;
  std::unique_ptr<KernelRows> kernels_;
  std::unique_ptr<MemcpyRows> memcpys_;
  std::unique_ptr<MemsetRows> memsets_;
  std::unique_ptr<SubAllocationRows> sub_allocations_;
  std::unique_ptr<ExactRows> exact_rows_;
  std::unique_ptr<CollectiveRows> collectives_;

  // The many small rows go in batches, flushed at the end of every pass.
  BatchInserter<SyncRow> syncs_;
  BatchInserter<StreamEventRow> stream_events_;
  BatchInserter<StreamRow> streams_;
  BatchInserter<MemAdviceRow> mem_advice_;
  BatchInserter<UmEventRow> um_events_;
  BatchInserter<NvtxRangeRow> nvtx_ranges_;
  NvtxRows nvtx_rows_;
  BatchInserter<FrameworkRangeRow> framework_ranges_;
  BatchInserter<NcclGroupRow> nccl_groups_;
  RowInserter<DeviceRow> devices_;
  RowInserter<TracerTimeRow> tracer_time_;
  bool every_device_refuses_pageable_ = true;  // of the devices written so far
  RowInserter<GraphNodeRow> graph_node_rows_;
  Statement insert_thread_, insert_string_, upsert_meta_, set_node_template_;

  // The kernel node whose parameter words follow on a thread (a thread's
  // records reach the writer in order).
  struct NodeArgs {
    uint64_t node_id = 0;  // 0: none awaiting its words
    uint32_t own_correlation_id = 0;
  };
  std::unordered_map<uint32_t, NodeArgs> node_args_;  // by thread id
};

}  // namespace apptracer
