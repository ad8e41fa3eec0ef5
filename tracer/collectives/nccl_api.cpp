// The NCCL API, interposed (LD_PRELOAD): each function forwards to NCCL's
// own (pnccl*, real_function.h) and records what the profiler plugin cannot
// know: the reduction operator, the buffers and root or peer as the caller
// passed them, the ncclComm_t handle, group membership, and operations the
// profiler never reports (1-rank communicators, a program whose
// NCCL_PROFILER_PLUGIN is its own). With the plugin active, its API event
// inside the call leaves the op id and communicator in the call state
// (nccl_call_state.h) and this writes one record with both.
//
// NCCL calls its own public API (ncclGroupStart inside ncclAlltoAll, ...):
// calls made while one is in progress on the thread only forward. Failed
// calls did nothing and are not recorded. Declarations are our own (no
// nccl.h): enums are ints, handles pointers, ncclUniqueId 128 bytes by value.
#include <unistd.h>

#include <cstdint>

#include "collectives/collective_capture.h"
#include "collectives/nccl_call_state.h"
#include "collectives/nccl_hash.h"
#include "collectives/nccl_names.h"
#include "collectives/real_function.h"

namespace {

using ncclResult_t = int;
using ncclComm_t = void*;
using cudaStream_t = void*;
struct ncclUniqueId {
  char internal[apptracer::nccl::kUniqueIdBytes];
};
struct ncclConfig_t;

constexpr ncclResult_t kSuccess = 0;
constexpr ncclResult_t kInternalError = 3;
constexpr ncclResult_t kInProgress = 7;  // nonblocking communicators: accepted, still running
constexpr int kSplitNoColor = -1;

const char* const kNcclLibraries[] = {"libnccl.so.2", "libnccl.so", nullptr};

#define APPTRACER_REAL_NCCL(function)                                                        \
  static apptracer::RealFunction<decltype(&function)> real(kNcclLibraries, "p" #function, \
                                                           #function)

bool succeeded(ncclResult_t result) { return result == kSuccess || result == kInProgress; }

}  // namespace

namespace apptracer::nccl {

namespace {

// What the caller asked for, as the interposed function saw it.
struct Operation {
  CollectiveKind kind;
  const void* send;
  const void* recv;
  size_t count;
  int datatype;
  int reduce_op;     // -1: none
  int root_or_peer;  // -1: neither
  ncclComm_t comm;
  cudaStream_t stream;
};

uint64_t handle_of(ncclComm_t comm) { return reinterpret_cast<uint64_t>(comm); }

int query(ncclResult_t (*getter)(ncclComm_t, int*), ncclComm_t comm) {
  int value = -1;
  if (!getter || getter(comm, &value) != kSuccess) return -1;
  return value;
}

int comm_device(ncclComm_t comm);
int comm_rank(ncclComm_t comm);
int comm_count(ncclComm_t comm);

// When the calling thread entered an init or split call (0 when nothing is
// captured): what NCCL allocates for itself until it returns is its own.
uint64_t entered_ns() {
  CollectiveCapture* capture = collective_capture();
  return capture ? capture->now_ns() : 0;
}

// A communicator NCCL made: its state under its rank-invariant id, bound to
// its handle, announced. `entered`: when the call that made it was entered
// (0: unknown), which returns now.
void adopt(CollectiveCapture& capture, ncclComm_t handle, CommState* state,
           uint64_t parent_comm_id = 0, uint64_t entered = 0) {
  comm_registry().bind(handle_of(handle), state);
  CommunicatorFacts facts;
  facts.handle = handle_of(handle);
  facts.parent_comm_id = parent_comm_id;
  facts.device = comm_device(handle);
  facts.call_start_ns = entered;
  emit_communicator(capture, *state, facts);
}

// A communicator an init call entered at `entered` made, under NCCL's id for it.
void adopt_created(ncclComm_t handle, uint64_t comm_id, int rank, int nranks, uint64_t entered) {
  CollectiveCapture* capture = collective_capture();
  if (!capture) return;
  adopt(*capture, handle, comm_registry().find_or_create(CommLibrary::Nccl, comm_id, rank, nranks),
        0, entered);
}

// A communicator whose creation we missed: a local id.
CommState* adopt_unknown(CollectiveCapture& capture, ncclComm_t handle) {
  CommState* state = comm_registry().create_local(CommLibrary::Nccl, comm_rank(handle),
                                                  comm_count(handle));
  adopt(capture, handle, state);
  return state;
}

uint32_t sequence_of(CommState& comm, const Operation& o) {
  switch (o.kind) {
    case CollectiveKind::Send: return comm.next_send_seq(o.root_or_peer);
    case CollectiveKind::Recv: return comm.next_recv_seq(o.root_or_peer);
    default: return comm.next_collective_seq();
  }
}

void record(CollectiveCapture& capture, const CallState& call, const Operation& o, uint64_t start) {
  CommRegistry& registry = comm_registry();
  uint64_t handle = handle_of(o.comm);
  CommState* comm = call.profiled_comm;
  if (comm) {
    // The profiler's context is the authority on which communicator this is.
    if (registry.by_handle(handle) != comm) registry.bind(handle, comm);
  } else {
    comm = registry.by_handle(handle);
    if (!comm) comm = adopt_unknown(capture, o.comm);
  }
  Record r = operation_record(*comm, o.kind, call.op_id ? call.op_id : next_collective_op_id());
  CollectiveRecord& op = r.collective;
  op.count = o.count;
  op.send = reinterpret_cast<uint64_t>(o.send);
  op.recv = reinterpret_cast<uint64_t>(o.recv);
  op.datatype = data_type_of(o.datatype);
  op.element_bytes = static_cast<uint32_t>(data_type_bytes(op.datatype));
  if (o.reduce_op >= 0) op.op = reduce_op_of(o.reduce_op);
  op.root_or_peer = o.root_or_peer;
  op.seq = sequence_of(*comm, o);
  op.group = call.group;
  op.stream = capture.stream_id(o.stream);
  op.start_ns = start;
  op.end_ns = capture.now_ns();
  if (call.op_id) op.flags |= kCollectivePlanFollows;
  if (call.graph_captured) op.flags |= kCollectiveGraphCaptured;
  emit(capture, r);
}

template <typename Call>
ncclResult_t traced(const Operation& operation, Call&& call) {
  CollectiveCapture* capture = collective_capture();
  CallState& state = call_state();
  if (!capture || state.depth > 0) return call();
  uint64_t start = capture->now_ns();
  state.depth = 1;
  state.op_id = 0;
  state.profiled_comm = nullptr;
  state.graph_captured = false;
  ncclResult_t result = call();
  state.depth = 0;
  if (succeeded(result)) record(*capture, state, operation, start);
  return result;
}

// Calls that are no operation (init, split, destroy): NCCL's own calls
// inside them only forward.
template <typename Call>
ncclResult_t forwarded(Call&& call) {
  CallState& state = call_state();
  ++state.depth;
  ncclResult_t result = call();
  --state.depth;
  return result;
}

template <typename F, typename... Args>
ncclResult_t call_real(RealFunction<F>& real, Args... args) {
  F f = real.get();
  return f ? f(args...) : kInternalError;
}

}  // namespace

}  // namespace apptracer::nccl

using apptracer::CollectiveKind;
using apptracer::nccl::Operation;
using apptracer::nccl::adopt_created;
using apptracer::nccl::unique_id_hash;
using apptracer::nccl::call_real;
using apptracer::nccl::entered_ns;
using apptracer::nccl::forwarded;
using apptracer::nccl::traced;

#define APPTRACER_EXPORT extern "C" __attribute__((visibility("default")))

// --- queries the interposer asks NCCL itself ------------------------------------

APPTRACER_EXPORT ncclResult_t ncclCommCuDevice(const ncclComm_t comm, int* device) {
  APPTRACER_REAL_NCCL(ncclCommCuDevice);
  return call_real(real, comm, device);
}
APPTRACER_EXPORT ncclResult_t ncclCommUserRank(const ncclComm_t comm, int* rank) {
  APPTRACER_REAL_NCCL(ncclCommUserRank);
  return call_real(real, comm, rank);
}
APPTRACER_EXPORT ncclResult_t ncclCommCount(const ncclComm_t comm, int* count) {
  APPTRACER_REAL_NCCL(ncclCommCount);
  return call_real(real, comm, count);
}

namespace apptracer::nccl {
namespace {
int comm_device(ncclComm_t comm) { return query(ncclCommCuDevice, comm); }
int comm_rank(ncclComm_t comm) { return query(ncclCommUserRank, comm); }
int comm_count(ncclComm_t comm) { return query(ncclCommCount, comm); }
}  // namespace
}  // namespace apptracer::nccl

// --- communicators ----------------------------------------------------------------

APPTRACER_EXPORT ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId id,
                                               int rank) {
  APPTRACER_REAL_NCCL(ncclCommInitRank);
  uint64_t entered = entered_ns();
  ncclResult_t result = forwarded([&] { return call_real(real, comm, nranks, id, rank); });
  if (succeeded(result)) adopt_created(*comm, unique_id_hash(id.internal), rank, nranks, entered);
  return result;
}

APPTRACER_EXPORT ncclResult_t ncclCommInitRankConfig(ncclComm_t* comm, int nranks, ncclUniqueId id,
                                                     int rank, ncclConfig_t* config) {
  APPTRACER_REAL_NCCL(ncclCommInitRankConfig);
  uint64_t entered = entered_ns();
  ncclResult_t result = forwarded([&] { return call_real(real, comm, nranks, id, rank, config); });
  if (succeeded(result)) adopt_created(*comm, unique_id_hash(id.internal), rank, nranks, entered);
  return result;
}

// NCCL hashes the first of the ids.
APPTRACER_EXPORT ncclResult_t ncclCommInitRankScalable(ncclComm_t* comm, int nranks, int rank,
                                                       int id_count, ncclUniqueId* ids,
                                                       ncclConfig_t* config) {
  APPTRACER_REAL_NCCL(ncclCommInitRankScalable);
  uint64_t entered = entered_ns();
  ncclResult_t result =
      forwarded([&] { return call_real(real, comm, nranks, rank, id_count, ids, config); });
  if (succeeded(result) && id_count > 0) {
    adopt_created(*comm, unique_id_hash(ids[0].internal), rank, nranks, entered);
  }
  return result;
}

// Every rank lives in this process: an id of this process's own is the same
// for all of them.
APPTRACER_EXPORT ncclResult_t ncclCommInitAll(ncclComm_t* comms, int ndev, const int* devices) {
  APPTRACER_REAL_NCCL(ncclCommInitAll);
  uint64_t entered = entered_ns();
  ncclResult_t result = forwarded([&] { return call_real(real, comms, ndev, devices); });
  if (succeeded(result) && ndev > 0) {
    uint64_t comm_id =
        apptracer::nccl::Hash().eat(getpid()).eat(reinterpret_cast<uint64_t>(comms[0])).digest();
    for (int rank = 0; rank < ndev; ++rank) adopt_created(comms[rank], comm_id, rank, ndev, entered);
  }
  return result;
}

// The child's id is NCCL's hash of (parent id, split count, color); every
// split call counts, NCCL_SPLIT_NOCOLOR ones too.
APPTRACER_EXPORT ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key,
                                            ncclComm_t* newcomm, ncclConfig_t* config) {
  APPTRACER_REAL_NCCL(ncclCommSplit);
  apptracer::CommState* parent = apptracer::comm_registry().by_handle(reinterpret_cast<uint64_t>(comm));
  int split_count = parent ? parent->next_split_count() : 0;
  uint64_t entered = entered_ns();
  ncclResult_t result = forwarded([&] { return call_real(real, comm, color, key, newcomm, config); });
  auto* capture = apptracer::collective_capture();
  if (!capture || !succeeded(result) || color == kSplitNoColor || !newcomm || !*newcomm) {
    return result;
  }
  int rank = apptracer::nccl::comm_rank(*newcomm);
  int nranks = apptracer::nccl::comm_count(*newcomm);
  bool joinable = parent && !parent->local;
  apptracer::CommState* child =
      joinable ? apptracer::comm_registry().find_or_create(
                     apptracer::CommLibrary::Nccl,
                     apptracer::nccl::split_hash(parent->comm_id, split_count, color), rank, nranks)
               : apptracer::comm_registry().create_local(apptracer::CommLibrary::Nccl, rank, nranks);
  apptracer::nccl::adopt(*capture, *newcomm, child, parent ? parent->comm_id : 0, entered);
  return result;
}

namespace {

template <typename Real>
ncclResult_t end_communicator(Real& real, ncclComm_t comm) {
  uint64_t handle = reinterpret_cast<uint64_t>(comm);
  apptracer::CommState* state = apptracer::comm_registry().by_handle(handle);
  ncclResult_t result = forwarded([&] { return call_real(real, comm); });
  if (auto* capture = apptracer::collective_capture(); capture && state) {
    apptracer::emit_communicator_end(*capture, *state, handle);
  }
  apptracer::comm_registry().unbind(handle);
  return result;
}

}  // namespace

APPTRACER_EXPORT ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  APPTRACER_REAL_NCCL(ncclCommDestroy);
  return end_communicator(real, comm);
}

APPTRACER_EXPORT ncclResult_t ncclCommAbort(ncclComm_t comm) {
  APPTRACER_REAL_NCCL(ncclCommAbort);
  return end_communicator(real, comm);
}

// --- groups -------------------------------------------------------------------------

APPTRACER_EXPORT ncclResult_t ncclGroupStart() {
  APPTRACER_REAL_NCCL(ncclGroupStart);
  apptracer::nccl::CallState& state = apptracer::nccl::call_state();
  if (state.depth == 0 && state.group_depth++ == 0) state.group = apptracer::nccl::next_group_id();
  return call_real(real);
}

// The outermost group's end is recorded: NCCL does the group's work there,
// and the first time sets up its connections, allocating their buffers.
APPTRACER_EXPORT ncclResult_t ncclGroupEnd() {
  APPTRACER_REAL_NCCL(ncclGroupEnd);
  apptracer::nccl::CallState& state = apptracer::nccl::call_state();
  bool outermost = state.depth == 0 && state.group_depth == 1;
  uint64_t entered = outermost ? entered_ns() : 0;
  ncclResult_t result = call_real(real);
  if (outermost) {
    if (apptracer::CollectiveCapture* capture = apptracer::collective_capture(); capture && state.group) {
      apptracer::Record r = apptracer::collective_record(apptracer::RecordType::NcclGroup);
      r.nccl_group.start_ns = entered;
      r.nccl_group.end_ns = capture->now_ns();
      r.nccl_group.group = state.group;
      apptracer::emit(*capture, r);
    }
  }
  if (state.depth == 0 && state.group_depth > 0 && --state.group_depth == 0) state.group = 0;
  return result;
}

// --- operations ---------------------------------------------------------------------

APPTRACER_EXPORT ncclResult_t ncclAllReduce(const void* send, void* recv, size_t count,
                                            int datatype, int op, ncclComm_t comm,
                                            cudaStream_t stream) {
  APPTRACER_REAL_NCCL(ncclAllReduce);
  return traced({CollectiveKind::AllReduce, send, recv, count, datatype, op, -1, comm, stream},
                [&] { return call_real(real, send, recv, count, datatype, op, comm, stream); });
}

APPTRACER_EXPORT ncclResult_t ncclBroadcast(const void* send, void* recv, size_t count,
                                            int datatype, int root, ncclComm_t comm,
                                            cudaStream_t stream) {
  APPTRACER_REAL_NCCL(ncclBroadcast);
  return traced({CollectiveKind::Broadcast, send, recv, count, datatype, -1, root, comm, stream},
                [&] { return call_real(real, send, recv, count, datatype, root, comm, stream); });
}

// The deprecated in-place broadcast.
APPTRACER_EXPORT ncclResult_t ncclBcast(void* buffer, size_t count, int datatype, int root,
                                        ncclComm_t comm, cudaStream_t stream) {
  APPTRACER_REAL_NCCL(ncclBcast);
  return traced({CollectiveKind::Broadcast, buffer, buffer, count, datatype, -1, root, comm, stream},
                [&] { return call_real(real, buffer, count, datatype, root, comm, stream); });
}

APPTRACER_EXPORT ncclResult_t ncclReduce(const void* send, void* recv, size_t count, int datatype,
                                         int op, int root, ncclComm_t comm, cudaStream_t stream) {
  APPTRACER_REAL_NCCL(ncclReduce);
  return traced({CollectiveKind::Reduce, send, recv, count, datatype, op, root, comm, stream},
                [&] { return call_real(real, send, recv, count, datatype, op, root, comm, stream); });
}

APPTRACER_EXPORT ncclResult_t ncclAllGather(const void* send, void* recv, size_t send_count,
                                            int datatype, ncclComm_t comm, cudaStream_t stream) {
  APPTRACER_REAL_NCCL(ncclAllGather);
  return traced({CollectiveKind::AllGather, send, recv, send_count, datatype, -1, -1, comm, stream},
                [&] { return call_real(real, send, recv, send_count, datatype, comm, stream); });
}

APPTRACER_EXPORT ncclResult_t ncclReduceScatter(const void* send, void* recv, size_t recv_count,
                                                int datatype, int op, ncclComm_t comm,
                                                cudaStream_t stream) {
  APPTRACER_REAL_NCCL(ncclReduceScatter);
  return traced(
      {CollectiveKind::ReduceScatter, send, recv, recv_count, datatype, op, -1, comm, stream},
      [&] { return call_real(real, send, recv, recv_count, datatype, op, comm, stream); });
}

APPTRACER_EXPORT ncclResult_t ncclAlltoAll(const void* send, void* recv, size_t count,
                                           int datatype, ncclComm_t comm, cudaStream_t stream) {
  APPTRACER_REAL_NCCL(ncclAlltoAll);
  return traced({CollectiveKind::AllToAll, send, recv, count, datatype, -1, -1, comm, stream},
                [&] { return call_real(real, send, recv, count, datatype, comm, stream); });
}

APPTRACER_EXPORT ncclResult_t ncclGather(const void* send, void* recv, size_t count, int datatype,
                                         int root, ncclComm_t comm, cudaStream_t stream) {
  APPTRACER_REAL_NCCL(ncclGather);
  return traced({CollectiveKind::Gather, send, recv, count, datatype, -1, root, comm, stream},
                [&] { return call_real(real, send, recv, count, datatype, root, comm, stream); });
}

APPTRACER_EXPORT ncclResult_t ncclScatter(const void* send, void* recv, size_t count, int datatype,
                                          int root, ncclComm_t comm, cudaStream_t stream) {
  APPTRACER_REAL_NCCL(ncclScatter);
  return traced({CollectiveKind::Scatter, send, recv, count, datatype, -1, root, comm, stream},
                [&] { return call_real(real, send, recv, count, datatype, root, comm, stream); });
}

APPTRACER_EXPORT ncclResult_t ncclSend(const void* send, size_t count, int datatype, int peer,
                                       ncclComm_t comm, cudaStream_t stream) {
  APPTRACER_REAL_NCCL(ncclSend);
  return traced({CollectiveKind::Send, send, nullptr, count, datatype, -1, peer, comm, stream},
                [&] { return call_real(real, send, count, datatype, peer, comm, stream); });
}

APPTRACER_EXPORT ncclResult_t ncclRecv(void* recv, size_t count, int datatype, int peer,
                                       ncclComm_t comm, cudaStream_t stream) {
  APPTRACER_REAL_NCCL(ncclRecv);
  return traced({CollectiveKind::Recv, nullptr, recv, count, datatype, -1, peer, comm, stream},
                [&] { return call_real(real, recv, count, datatype, peer, comm, stream); });
}
