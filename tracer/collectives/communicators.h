// What the tracer knows about each communicator (NCCL or MPI) while the
// program runs: its rank-invariant id and the counters that number its
// operations the same way on every rank.
//
// States are made rarely (a communicator's creation, under a lock) and never
// freed. The hot path finds them without locking: NCCL's profiler hands the
// state back as its context, and interposed calls look a handle up in a
// fixed open-addressing table of atomics.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "apptracer/enums.h"

namespace apptracer {

struct CommState {
  CommState(CommLibrary library, uint64_t comm_id, int rank, int nranks, bool local = false);

  const CommLibrary library;
  const uint64_t comm_id;
  // A communicator whose creation the tracer did not see: its comm_id is
  // this process's own (bit 63, the pid, a count), and so are its children's.
  const bool local;
  const int32_t rank;
  const int32_t nranks;

  // Collectives in call order: every member calls them in the same order.
  uint32_t next_collective_seq() { return collectives_.fetch_add(1, std::memory_order_relaxed); }
  // Point to point, per peer and direction; kUnassigned for a peer out of range.
  uint32_t next_send_seq(int peer);
  uint32_t next_recv_seq(int peer);
  // NCCL: every ncclCommSplit of this communicator counts, as NCCL counts them.
  int next_split_count() { return splits_.fetch_add(1, std::memory_order_relaxed) + 1; }

 private:
  std::atomic<uint32_t> collectives_{0};
  std::atomic<int> splits_{0};
  std::unique_ptr<std::atomic<uint32_t>[]> sent_;
  std::unique_ptr<std::atomic<uint32_t>[]> received_;
};

class CommRegistry {
 public:
  CommRegistry();

  static constexpr size_t kHandleSlots = 4096;

  // The state of (library, comm_id, rank), made the first time (`created`).
  CommState* find_or_create(CommLibrary library, uint64_t comm_id, int rank, int nranks,
                            bool* created = nullptr);
  // A communicator whose rank-invariant id is unknown gets a local one.
  CommState* create_local(CommLibrary library, int rank, int nranks);

  // The program's handle (ncclComm_t, MPI_Comm) for a state. Rare: locks.
  void bind(uint64_t handle, CommState* state);
  void unbind(uint64_t handle);
  // Hot path: no lock, no allocation.
  CommState* by_handle(uint64_t handle) const;

  // In a forked child: the lock may have been held by a thread that is gone,
  // and local ids take the child's pid.
  void reset_after_fork();

 private:
  struct Slot {
    std::atomic<uint64_t> handle{0};
    std::atomic<CommState*> state{nullptr};
  };
  static size_t slot_of(uint64_t handle);

  std::mutex mutex_;
  std::vector<std::unique_ptr<CommState>> states_;
  uint64_t local_prefix_;  // bit 63 | pid << 32: local ids of two processes differ
  uint64_t next_local_ = 1;
  Slot slots_[kHandleSlots];
};

CommRegistry& comm_registry();

}  // namespace apptracer
