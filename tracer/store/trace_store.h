// Turns records into rows of the trace database (tables.def), on the writer
// thread only. Its parts, each in a file of its own: address resolution
// (address_resolver), joining GPU activity to its call (activity_join),
// kernel signatures (kernel_signatures), argument sets (kernel_arg_sets),
// unified-memory rows (um_rows), framework allocators' blocks
// (sub_allocation_rows), --exact rows (exact_rows) and NCCL / MPI operations
// (collective_rows).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "apptracer/row_inserter.h"
#include "base/device_info.h"
#include "store/activity_join.h"
#include "store/address_resolver.h"
#include "store/collective_rows.h"
#include "store/exact_rows.h"
#include "store/graph_nodes.h"
#include "store/kernel_arg_sets.h"
#include "store/kernel_signatures.h"
#include "store/nvtx_rows.h"
#include "store/sub_allocation_rows.h"

namespace apptracer {

struct KernelTraits;
struct MemcpyTraits;
struct MemsetTraits;

struct StoreOptions {
  // Writer passes a row waits for its GPU activity before it is stored
  // without it (0: GPU activity is not recorded in this process).
  int hold_passes = 2;
  // Passes a row stored without its activity is kept, in case it comes.
  int late_passes = 25;
};

class TraceStore {
 public:
  // Creates the database at `path` (which must not exist) with the schema,
  // in WAL mode, with meta.status = incomplete. Addresses resolve in
  // `registry` (CUDA's allocations) first, then in host blocks.
  TraceStore(const std::string& path, const AllocationRegistry& registry, StringTable& strings,
             HostBlockResolution host = {}, StoreOptions options = {});
  ~TraceStore();

  void begin();
  void commit();

  void write(const Record* records, size_t count);
  void write_string(uint32_t id, const std::string& text);
  void write_device(const DeviceInfo& device);
  void set_meta(const std::string& key, const std::string& value);

  // Once per writer pass, inside its transaction.
  void end_pass();
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
  void write_api_call(const Record& r);
  // A CUPTI function name's id in strings (names are global constants: keyed by pointer).
  int64_t api_name_id(const char* name);
  // `numa_node_at_free`: for a block already freed, where its pages were.
  void write_allocation(const Record& r, std::optional<int> numa_node_at_free = std::nullopt);
  void write_promoted_block(const PromotedBlock& block);
  void write_free(const Record& r);
  void write_memcpy(const Record& r);
  void write_memset(const Record& r);
  void write_kernel(const Record& r);
  void write_kernel_args(const Record& r);
  void write_sync(const Record& r);
  void write_stream_event(const Record& r);
  void write_stream(const Record& r);
  void write_thread(const Record& r);
  void write_mem_advice(const Record& r);
  void write_um_event(const Record& r);
  void write_activity(const Record& r);
  void write_graph_node(const Record& r);
  void write_nvtx(const Record& r);
  // A parameter word resolved at `ns`, with the access the kernel's signature
  // gives it; nullopt for a word the signature says is no pointer.
  std::optional<KernelArgWordRow> argument_row(uint32_t name_id, const KernelArgWord& word,
                                               uint64_t ns);
  // Work a graph launch ran (activity only): its node's parameters,
  // resolved at the launch.
  void fill_from_graph_node(KernelRow& row);
  void fill_from_graph_node(MemcpyRow& row);
  void fill_from_graph_node(MemsetRow& row);
  std::optional<uint64_t> graph_launch_start(const std::optional<int64_t>& correlation_id) const;

  Database db_;
  StringTable& strings_;
  AddressResolver resolver_;
  KernelSignatures signatures_;
  std::unique_ptr<KernelArgSets> arg_sets_;
  std::unique_ptr<SubAllocationRows> sub_allocations_;
  std::unique_ptr<ExactRows> exact_rows_;
  std::unique_ptr<CollectiveRows> collectives_;

  // The many small rows go in batches (flushed at the end of every pass);
  // rows that may be stored again later get their ids from the store.
  BatchInserter<ApiCallRow> api_calls_;
  RowInserter<AllocationRow> allocations_;
  BatchInserter<SyncRow> syncs_;
  BatchInserter<StreamEventRow> stream_events_;
  BatchInserter<StreamRow> streams_;
  BatchInserter<MemAdviceRow> mem_advice_;
  BatchInserter<UmEventRow> um_events_;
  RowInserter<DeviceRow> devices_;
  BatchInserter<KernelRow> kernels_;
  BatchInserter<MemcpyRow> memcpys_;
  BatchInserter<MemsetRow> memsets_;
  RowInserter<KernelRow> kernels_again_;
  RowInserter<MemcpyRow> memcpys_again_;
  RowInserter<MemsetRow> memsets_again_;
  RowInserter<GraphNodeRow> graph_node_rows_;
  BatchInserter<NvtxRangeRow> nvtx_ranges_;
  NvtxRows nvtx_rows_;
  int64_t next_kernel_id_ = 1, next_memcpy_id_ = 1, next_memset_id_ = 1;
  void flush_batches();
  Statement insert_thread_, insert_string_, upsert_meta_, update_free_, set_node_template_;

  std::unique_ptr<ActivityJoin<KernelRow, KernelTraits>> kernel_join_;
  std::unique_ptr<ActivityJoin<MemcpyRow, MemcpyTraits>> memcpy_join_;
  std::unique_ptr<ActivityJoin<MemsetRow, MemsetTraits>> memset_join_;

  // Frees that reached the writer before their allocation's row (another
  // thread's buffer, drained later): applied when the row arrives.
  struct PendingFree {
    std::optional<int64_t> correlation_id;
    uint64_t ns;
  };
  std::unordered_map<uint64_t, PendingFree> pending_frees_;
  std::unordered_map<const char*, uint32_t> api_name_ids_;  // CUPTI function name -> id

  // A launch's parameter words, gathered from the records that follow it on
  // its thread (a thread's records reach the writer in order). One per
  // thread, reused: no allocation per launch.
  struct LaunchArgs {
    uint32_t own_correlation_id = 0;  // 0: no launch awaiting its words
    uint32_t outer_correlation_id = 0;
    uint32_t name_id = 0;
    uint64_t api_start_ns = 0;
    std::vector<KernelArgWordRow> words;
  };
  std::unordered_map<uint32_t, LaunchArgs> launch_args_;  // by thread id

  GraphNodes graph_nodes_;
  // The kernel node whose parameter words follow on a thread (like LaunchArgs).
  struct NodeArgs {
    uint64_t node_id = 0;  // 0: none awaiting its words
    uint32_t own_correlation_id = 0;
  };
  std::unordered_map<uint32_t, NodeArgs> node_args_;  // by thread id
};

}  // namespace apptracer
