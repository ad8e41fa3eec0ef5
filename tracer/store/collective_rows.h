// NCCL and MPI records -> rows of `communicators` and `collectives`, on the
// writer thread (trace_store.cpp hands them over).
//
// An operation's row gathers what several records say about it, which may
// come from several threads in any order: the call (Collective), what NCCL
// planned (CollectivePlan, on the thread that launched the plan's kernel),
// the kernel launched inside NCCL's launch bracket on that thread before the
// plan records (NcclLaunch begin / Kernel / NcclLaunch end), and a
// nonblocking MPI operation's completion (CollectiveDone). A row is stored
// once complete, or after `hold_passes` writer passes without its plan;
// a row awaiting an MPI completion waits for it (or the end of the trace).
// What comes later, within `late_passes`, stores the row again, whole. At
// the end, rows take their GPU times from the kernels that ran them.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <tuple>
#include <unordered_map>

#include "apptracer/records.h"
#include "apptracer/row_inserter.h"
#include "store/address_resolver.h"

namespace apptracer {

// Bytes an NCCL operation sends from and receives into this rank's buffers
// (0: that buffer takes no part, e.g. a broadcast's send on a non-root).
struct BufferBytes {
  uint64_t send = 0;
  uint64_t recv = 0;
};
BufferBytes nccl_buffer_bytes(CollectiveKind kind, uint64_t count, uint64_t element_bytes,
                              int nranks, int rank, int root);

class CollectiveRows {
 public:
  CollectiveRows(Database& db, AddressResolver& resolver, int hold_passes, int late_passes);

  void write(const Record& r);
  // A kernel launch record: inside an NCCL launch bracket, it ran the plan.
  void kernel_launched(const Record& r);
  void end_pass();
  // Stores every row still waiting, then fills GPU times from the kernels.
  void finish();

 private:
  struct Pending {
    std::optional<Record> call;
    std::optional<CollectivePlanRecord> plan;
    std::optional<CollectiveDoneRecord> done;
    uint32_t tid = 0;
    uint32_t launch = 0;  // correlation id of the kernel that ran it
    std::optional<int64_t> seq;
    std::optional<int64_t> id;  // once stored
    int passes = 0;  // writer passes waited (before storing) or kept (after)
  };
  struct ThreadLaunch {
    bool open = false;
    uint32_t kernel = 0;  // correlation id of the kernel launched in the open bracket
    uint32_t last = 0;    // ... in the last closed one, until the thread's next call
  };
  using CommKey = std::tuple<CommLibrary, uint64_t, int32_t>;  // library, comm_id, rank

  void write_communicator(const Record& r);
  void write_call(const Record& r);
  void write_plan(const Record& r);
  void write_done(const Record& r);
  void write_launch(const Record& r);

  CommunicatorRow& communicator(CommLibrary library, uint64_t comm_id, int32_t rank,
                                int32_t nranks, uint64_t ns);
  void number_point_to_point(Pending& p);
  bool complete(const Pending& p) const;
  CollectiveRow build_row(const Pending& p);
  void store(Pending& p);
  void store_if_complete(Pending& p);

  Database& db_;
  AddressResolver& resolver_;
  const int hold_passes_;
  const int late_passes_;
  RowInserter<CommunicatorRow> communicators_;
  RowInserter<CollectiveRow> collectives_;
  std::map<CommKey, CommunicatorRow> communicator_rows_;
  int64_t next_communicator_id_ = 1;
  int64_t next_collective_id_ = 1;
  std::unordered_map<uint64_t, Pending> pending_;        // by op id
  std::unordered_map<uint32_t, ThreadLaunch> launches_;  // by thread id
  // MPI point to point: the next number per (communicator, sender, receiver, tag).
  std::map<std::tuple<int64_t, int64_t, int64_t, int64_t>, int64_t> point_to_point_;
};

}  // namespace apptracer
