// The MPI library the program runs with, as the MPI interposer
// (mpi_api.cpp) needs it. The tracer links no MPI and includes no mpi.h:
// handles are pointer-sized integers here, which forwards any MPI's handles
// unchanged (x86-64 passes ints and pointers alike in one register). Reading
// them (which communicator, which datatype, a status's source) needs the
// library's ABI; only Open MPI's (4.x, 5.x: handles are pointers to
// predefined objects, MPI_Status is {source, tag, error, cancelled, count})
// is supported. Under another MPI the interposer only forwards.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <utility>
#include <vector>

#include "apptracer/enums.h"
#include "collectives/collective_capture.h"
#include "collectives/real_function.h"

namespace apptracer::mpi {

using Handle = uintptr_t;  // MPI_Comm, MPI_Datatype, MPI_Op, MPI_Request, MPI_Info, MPI_Group

// Open MPI's MPI_Status.
struct Status {
  int source;
  int tag;
  int error;
  int cancelled;
  size_t count;
};

constexpr int kSuccess = 0;
constexpr int kErrOther = 16;
constexpr int kAnySource = -1;
constexpr int kProcNull = -2;
constexpr int kAnyTag = -1;
constexpr int kUndefined = -32766;
inline const void* in_place() { return reinterpret_cast<const void*>(1); }
inline Status* status_ignore() { return nullptr; }

extern const char* const kLibraries[];  // sonames, most likely first

template <typename F>
using Real = RealFunction<F>;

class Runtime {
 public:
  // Found once MPI is initialized (the interposed MPI_Init), else at first use.
  static Runtime& get();

  // Open MPI's ABI: handles and statuses can be read.
  bool readable() const { return readable_; }
  Handle comm_world() const { return comm_world_; }
  Handle comm_null() const { return comm_null_; }
  Handle byte_type() const { return byte_; }

  DataType data_type(Handle datatype) const;
  ReduceOp reduce_op(Handle op) const;
  // Bytes per element (PMPI_Type_size), 0 when unknown.
  int type_size(Handle datatype) const;
  int comm_rank(Handle comm) const;
  int comm_size(Handle comm) const;
  // A completed receive's source and size (PMPI_Get_count in bytes).
  uint64_t received_bytes(const Status& status) const;
  bool cancelled(const Status& status) const;

  // PMPI calls the interposer makes on its own behalf (never recorded).
  int bcast(void* buffer, int count, Handle datatype, int root, Handle comm) const;
  int send(const void* buffer, int count, Handle datatype, int peer, int tag, Handle comm) const;
  int recv(void* buffer, int count, Handle datatype, int peer, int tag, Handle comm) const;

 private:
  Runtime();
  void* symbol(const char* name) const;

  void* library_ = nullptr;
  bool readable_ = false;
  Handle comm_world_ = 0, comm_null_ = 0, byte_ = 0;
  std::vector<std::pair<Handle, DataType>> data_types_;
  std::vector<std::pair<Handle, ReduceOp>> reduce_ops_;
  int (*type_size_)(Handle, int*) = nullptr;
  int (*comm_rank_)(Handle, int*) = nullptr;
  int (*comm_size_)(Handle, int*) = nullptr;
  int (*get_count_)(const Status*, Handle, int*) = nullptr;
  int (*test_cancelled_)(const Status*, int*) = nullptr;
  int (*bcast_)(void*, int, Handle, int, Handle) = nullptr;
  int (*send_)(const void*, int, Handle, int, int, Handle) = nullptr;
  int (*recv_)(void*, int, Handle, int, int, Handle, Status*) = nullptr;
};

// Communicators: the state of a handle, made (with a local id) the first
// time one is seen whose creation was not; MPI_COMM_WORLD is comm_id 0.
CommState* comm_state(CollectiveCapture& capture, Handle comm);
// A communicator was created (dup, split, create ...): its members agree on
// its id (Score-P's scheme: local rank 0's world rank and creation count,
// broadcast over it) and it is announced. Collective over `created`.
void on_comm_created(CollectiveCapture& capture, Handle parent, Handle created);
// MPI_Init: the world communicator and its clock offset to world rank 0.
void on_initialized(CollectiveCapture& capture);

// Nonblocking operations awaiting completion, by request handle. A fixed
// table under its own lock (never the writer's): no allocation.
class Requests {
 public:
  static constexpr size_t kSlots = 1 << 16;
  void add(Handle request, uint64_t op_id, bool receives);
  // The op of a request, removed; 0 when untracked.
  uint64_t take(Handle request, bool& receives);

 private:
  struct Slot {
    Handle request = 0;
    uint64_t value = 0;  // op_id << 1 | receives; 0 = free, 1 = removed
  };
  std::mutex mutex_;
  Slot slots_[kSlots];
};
Requests& requests();

}  // namespace apptracer::mpi
