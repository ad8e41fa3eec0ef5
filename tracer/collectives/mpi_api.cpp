// The MPI API, interposed through the profiling interface (LD_PRELOAD):
// each MPI_X forwards to PMPI_X (mpi_runtime.h says how it is found and
// which MPIs are read) and records point-to-point operations (blocking and
// nonblocking, completed by the wait and test calls), collectives (blocking
// and the common nonblocking ones) and the creation of communicators.
//
// Buffers are recorded as the program passed them, host or device: the
// writer resolves them to allocations. A call made from inside another (an
// MPI implementing one call with another) only forwards, and so do calls
// while the tracer is not recording or the MPI's ABI is not Open MPI's.
// Not recorded: persistent requests (MPI_Send_init, MPI_Start), probes,
// one-sided operations, neighborhood collectives and nonblocking v-variants.
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "collectives/collective_capture.h"
#include "collectives/mpi_runtime.h"

namespace apptracer::mpi {

namespace {

thread_local int depth = 0;

#define APPTRACER_REAL_MPI(function) \
  static Real<decltype(&function)> real(kLibraries, "P" #function, #function)

template <typename F, typename... Args>
int call_real(Real<F>& real, Args... args) {
  F f = real.get();
  return f ? f(args...) : kErrOther;
}

// Recording is on, this is the program's own call, and the MPI is readable.
CollectiveCapture* recording() {
  CollectiveCapture* capture = collective_capture();
  if (!capture || depth > 0 || !Runtime::get().readable()) return nullptr;
  return capture;
}

template <typename Call>
int forward_inside(Call&& call) {
  ++depth;
  int result = call();
  --depth;
  return result;
}

uint64_t bytes_of(int count, Handle datatype) {
  if (count <= 0) return 0;
  return static_cast<uint64_t>(count) * static_cast<uint64_t>(Runtime::get().type_size(datatype));
}

uint64_t bytes_of(const int* counts, int n, Handle datatype) {
  uint64_t total = 0;
  for (int i = 0; counts && i < n; ++i) total += bytes_of(counts[i], datatype);
  return total;
}

uint64_t elements_of(const int* counts, int n) {
  uint64_t total = 0;
  for (int i = 0; counts && i < n; ++i) total += counts[i] > 0 ? counts[i] : 0;
  return total;
}

// --- operations ------------------------------------------------------------------

struct Operation {
  CollectiveKind kind = CollectiveKind::Barrier;
  const void* send = nullptr;
  uint64_t send_bytes = 0;
  const void* recv = nullptr;
  uint64_t recv_bytes = 0;
  uint64_t count = 0;
  Handle datatype = 0;
  Handle op = 0;  // 0: no reduction
  int root_or_peer = -1;
  int tag = 0;
};

uint64_t emit_operation(CollectiveCapture& capture, CommState& comm, const Operation& o,
                        uint32_t seq, uint64_t start, bool nonblocking) {
  const Runtime& mpi = Runtime::get();
  uint64_t op_id = next_collective_op_id();
  Record r = operation_record(comm, o.kind, op_id);
  CollectiveRecord& op = r.collective;
  op.count = o.count;
  op.send = reinterpret_cast<uint64_t>(o.send);
  op.recv = reinterpret_cast<uint64_t>(o.recv);
  op.send_bytes = o.send ? o.send_bytes : 0;
  op.recv_bytes = o.recv ? o.recv_bytes : 0;
  if (o.datatype) {
    op.datatype = mpi.data_type(o.datatype);
    op.element_bytes = static_cast<uint32_t>(mpi.type_size(o.datatype));
  }
  if (o.op) op.op = mpi.reduce_op(o.op);
  op.root_or_peer = o.root_or_peer;
  op.tag = o.tag;
  op.seq = seq;
  op.start_ns = start;
  op.end_ns = capture.now_ns();
  if (nonblocking) op.flags |= kCollectiveNonblocking;
  emit(capture, r);
  return op_id;
}

// A collective: `describe(comm)` says what it moves on this rank.
template <typename Describe, typename Call>
int collective(Handle comm, Handle* request, Describe&& describe, Call&& call) {
  CollectiveCapture* capture = recording();
  if (!capture) return call();
  uint64_t start = capture->now_ns();
  int result = forward_inside(call);
  if (result != kSuccess) return result;
  CommState& state = *comm_state(*capture, comm);
  uint64_t op_id = emit_operation(*capture, state, describe(state), state.next_collective_seq(),
                                  start, request != nullptr);
  if (request) requests().add(*request, op_id, false);
  return result;
}

// Point to point: the writer numbers them per (communicator, sender,
// receiver, tag), once a receive's source and tag are known.
Operation send_operation(const void* buffer, int count, Handle datatype, int peer, int tag) {
  Operation o;
  o.kind = CollectiveKind::Send;
  o.send = buffer;
  o.send_bytes = bytes_of(count, datatype);
  o.count = count;
  o.datatype = datatype;
  o.root_or_peer = peer;
  o.tag = tag;
  return o;
}

// A receive as posted: source and tag may be wildcards until it completes.
Operation receive_operation(void* buffer, int count, Handle datatype, int peer, int tag) {
  Operation o;
  o.kind = CollectiveKind::Recv;
  o.recv = buffer;
  o.recv_bytes = bytes_of(count, datatype);
  o.count = count;
  o.datatype = datatype;
  o.root_or_peer = peer;
  o.tag = tag;
  return o;
}

// A completed receive: its status says who sent how much.
Operation received_operation(void* buffer, int count, Handle datatype, const Status& status) {
  Operation o = receive_operation(buffer, count, datatype, status.source, status.tag);
  uint64_t bytes = Runtime::get().received_bytes(status);
  if (bytes != UINT64_MAX) o.recv_bytes = bytes;
  return o;
}

uint64_t record_point_to_point(CollectiveCapture& capture, Handle comm, const Operation& o,
                               uint64_t start, bool nonblocking) {
  return emit_operation(capture, *comm_state(capture, comm), o, CollectiveRecord::kUnassigned,
                        start, nonblocking);
}

template <typename Call>
int send(const void* buffer, int count, Handle datatype, int peer, int tag, Handle comm,
         Handle* request, Call&& call) {
  CollectiveCapture* capture = recording();
  if (!capture || peer == kProcNull) return call();
  uint64_t start = capture->now_ns();
  int result = forward_inside(call);
  if (result != kSuccess) return result;
  uint64_t op_id = record_point_to_point(*capture, comm, send_operation(buffer, count, datatype, peer, tag),
                                         start, request != nullptr);
  if (request) requests().add(*request, op_id, false);
  return result;
}

template <typename Call>
int receive(void* buffer, int count, Handle datatype, int peer, Handle comm, Status* status,
            Call&& call) {
  CollectiveCapture* capture = recording();
  if (!capture || peer == kProcNull) return call(status);
  Status own{};
  Status* used = status ? status : &own;
  uint64_t start = capture->now_ns();
  int result = forward_inside([&] { return call(used); });
  if (result != kSuccess) return result;
  record_point_to_point(*capture, comm, received_operation(buffer, count, datatype, *used), start,
                        false);
  return result;
}

template <typename Call>
int post_receive(void* buffer, int count, Handle datatype, int peer, int tag, Handle comm,
                 Handle* request, Call&& call) {
  CollectiveCapture* capture = recording();
  if (!capture || peer == kProcNull) return call();
  uint64_t start = capture->now_ns();
  int result = forward_inside(call);
  if (result != kSuccess) return result;
  uint64_t op_id = record_point_to_point(
      *capture, comm, receive_operation(buffer, count, datatype, peer, tag), start, true);
  requests().add(*request, op_id, true);
  return result;
}

// MPI_Sendrecv(_replace): one call, a send and a receive.
template <typename Call>
int send_and_receive(const Operation& sent, void* buffer, int count, Handle datatype, int source,
                     Handle comm, Status* status, Call&& call) {
  CollectiveCapture* capture = recording();
  if (!capture) return call(status);
  Status own{};
  Status* used = status ? status : &own;
  uint64_t start = capture->now_ns();
  int result = forward_inside([&] { return call(used); });
  if (result != kSuccess) return result;
  if (sent.root_or_peer != kProcNull) record_point_to_point(*capture, comm, sent, start, false);
  if (source != kProcNull) {
    record_point_to_point(*capture, comm, received_operation(buffer, count, datatype, *used),
                          start, false);
  }
  return result;
}

// --- completion --------------------------------------------------------------------

void complete(CollectiveCapture& capture, Handle request, const Status* status) {
  bool receives = false;
  uint64_t op_id = requests().take(request, receives);
  if (op_id == 0) return;
  const Runtime& mpi = Runtime::get();
  Record r = collective_record(RecordType::CollectiveDone);
  CollectiveDoneRecord& done = r.collective_done;
  done.op_id = op_id;
  done.ns = capture.now_ns();
  done.bytes = UINT64_MAX;
  done.source = -1;
  if (receives && status) {
    done.source = status->source;
    done.tag = status->tag;
    done.bytes = mpi.received_bytes(*status);
    done.cancelled = mpi.cancelled(*status);
  }
  emit(capture, r);
}

// Request handles (the calls overwrite them with MPI_REQUEST_NULL) and
// statuses (when the program ignores them), per thread, grown rarely.
struct Scratch {
  Handle* requests = nullptr;
  Status* statuses = nullptr;
  int capacity = 0;
  bool reserve(int n) {
    if (n <= capacity) return true;
    auto* more_requests = static_cast<Handle*>(std::realloc(requests, sizeof(Handle) * n));
    if (!more_requests) return false;
    requests = more_requests;
    auto* more_statuses = static_cast<Status*>(std::realloc(statuses, sizeof(Status) * n));
    if (!more_statuses) return false;
    statuses = more_statuses;
    capacity = n;
    return true;
  }
};
thread_local Scratch scratch;

// A completion call over an array of requests: `completed(saved, statuses)`
// reports those that finished.
template <typename Call, typename Completed>
int complete_array(int count, Handle* array, Status* user_statuses, Call&& call,
                   Completed&& completed) {
  CollectiveCapture* capture = recording();
  if (!capture || count <= 0 || !scratch.reserve(count)) return call(user_statuses);
  std::memcpy(scratch.requests, array, sizeof(Handle) * count);
  Status* statuses = user_statuses ? user_statuses : scratch.statuses;
  int result = forward_inside([&] { return call(statuses); });
  if (result == kSuccess) completed(*capture, scratch.requests, statuses);
  return result;
}

// `finished`: the test's flag (nullptr for a wait, which always finishes).
template <typename Call>
int complete_one(Handle* request, Status* user_status, const int* finished, Call&& call) {
  CollectiveCapture* capture = recording();
  if (!capture || !request) return call(user_status);
  Handle saved = *request;
  Status own{};
  Status* status = user_status ? user_status : &own;
  int result = forward_inside([&] { return call(status); });
  if (result == kSuccess && (!finished || *finished)) complete(*capture, saved, status);
  return result;
}

// --- communicators -------------------------------------------------------------------

template <typename Call>
int create_communicator(Handle parent, Handle* created, Call&& call) {
  CollectiveCapture* capture = recording();
  if (!capture) return call();
  int result = forward_inside(call);
  if (result == kSuccess && created) on_comm_created(*capture, parent, *created);
  return result;
}

}  // namespace

}  // namespace apptracer::mpi

using apptracer::CollectiveKind;
using apptracer::CommState;
using namespace apptracer::mpi;  // NOLINT: the wrappers below speak MPI

#define APPTRACER_EXPORT extern "C" __attribute__((visibility("default")))

// --- lifecycle ----------------------------------------------------------------------

APPTRACER_EXPORT int MPI_Init(int* argc, char*** argv) {
  APPTRACER_REAL_MPI(MPI_Init);
  int result = forward_inside([&] { return call_real(real, argc, argv); });
  if (auto* capture = apptracer::collective_capture(); capture && result == kSuccess) {
    on_initialized(*capture);
  }
  return result;
}

APPTRACER_EXPORT int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  APPTRACER_REAL_MPI(MPI_Init_thread);
  int result = forward_inside([&] { return call_real(real, argc, argv, required, provided); });
  if (auto* capture = apptracer::collective_capture(); capture && result == kSuccess) {
    on_initialized(*capture);
  }
  return result;
}

// --- point to point -------------------------------------------------------------------

#define APPTRACER_BLOCKING_SEND(function)                                                    \
  APPTRACER_EXPORT int function(const void* buffer, int count, Handle datatype, int peer,    \
                                int tag, Handle comm) {                                      \
    APPTRACER_REAL_MPI(function);                                                            \
    return send(buffer, count, datatype, peer, tag, comm, nullptr,                           \
                [&] { return call_real(real, buffer, count, datatype, peer, tag, comm); });  \
  }
APPTRACER_BLOCKING_SEND(MPI_Send)
APPTRACER_BLOCKING_SEND(MPI_Ssend)
APPTRACER_BLOCKING_SEND(MPI_Bsend)
APPTRACER_BLOCKING_SEND(MPI_Rsend)

#define APPTRACER_NONBLOCKING_SEND(function)                                                    \
  APPTRACER_EXPORT int function(const void* buffer, int count, Handle datatype, int peer,       \
                                int tag, Handle comm, Handle* request) {                        \
    APPTRACER_REAL_MPI(function);                                                               \
    return send(buffer, count, datatype, peer, tag, comm, request, [&] {                        \
      return call_real(real, buffer, count, datatype, peer, tag, comm, request);                \
    });                                                                                         \
  }
APPTRACER_NONBLOCKING_SEND(MPI_Isend)
APPTRACER_NONBLOCKING_SEND(MPI_Issend)
APPTRACER_NONBLOCKING_SEND(MPI_Ibsend)
APPTRACER_NONBLOCKING_SEND(MPI_Irsend)

APPTRACER_EXPORT int MPI_Recv(void* buffer, int count, Handle datatype, int peer, int tag,
                              Handle comm, Status* status) {
  APPTRACER_REAL_MPI(MPI_Recv);
  return receive(buffer, count, datatype, peer, comm, status, [&](Status* used) {
    return call_real(real, buffer, count, datatype, peer, tag, comm, used);
  });
}

APPTRACER_EXPORT int MPI_Irecv(void* buffer, int count, Handle datatype, int peer, int tag,
                               Handle comm, Handle* request) {
  APPTRACER_REAL_MPI(MPI_Irecv);
  return post_receive(buffer, count, datatype, peer, tag, comm, request, [&] {
    return call_real(real, buffer, count, datatype, peer, tag, comm, request);
  });
}

APPTRACER_EXPORT int MPI_Sendrecv(const void* send_buffer, int send_count, Handle send_type,
                                  int dest, int send_tag, void* recv_buffer, int recv_count,
                                  Handle recv_type, int source, int recv_tag, Handle comm,
                                  Status* status) {
  APPTRACER_REAL_MPI(MPI_Sendrecv);
  return send_and_receive(send_operation(send_buffer, send_count, send_type, dest, send_tag),
                          recv_buffer, recv_count, recv_type, source, comm, status,
                          [&](Status* used) {
                            return call_real(real, send_buffer, send_count, send_type, dest,
                                             send_tag, recv_buffer, recv_count, recv_type, source,
                                             recv_tag, comm, used);
                          });
}

APPTRACER_EXPORT int MPI_Sendrecv_replace(void* buffer, int count, Handle datatype, int dest,
                                          int send_tag, int source, int recv_tag, Handle comm,
                                          Status* status) {
  APPTRACER_REAL_MPI(MPI_Sendrecv_replace);
  return send_and_receive(send_operation(buffer, count, datatype, dest, send_tag), buffer, count,
                          datatype, source, comm, status, [&](Status* used) {
                            return call_real(real, buffer, count, datatype, dest, send_tag, source,
                                             recv_tag, comm, used);
                          });
}

// --- completion -----------------------------------------------------------------------

APPTRACER_EXPORT int MPI_Wait(Handle* request, Status* status) {
  APPTRACER_REAL_MPI(MPI_Wait);
  return complete_one(request, status, nullptr,
                      [&](Status* used) { return call_real(real, request, used); });
}

APPTRACER_EXPORT int MPI_Test(Handle* request, int* flag, Status* status) {
  APPTRACER_REAL_MPI(MPI_Test);
  return complete_one(request, status, flag,
                      [&](Status* used) { return call_real(real, request, flag, used); });
}

APPTRACER_EXPORT int MPI_Waitall(int count, Handle* array, Status* statuses) {
  APPTRACER_REAL_MPI(MPI_Waitall);
  return complete_array(
      count, array, statuses, [&](Status* used) { return call_real(real, count, array, used); },
      [&](apptracer::CollectiveCapture& capture, const Handle* saved, const Status* used) {
        for (int i = 0; i < count; ++i) complete(capture, saved[i], &used[i]);
      });
}

APPTRACER_EXPORT int MPI_Testall(int count, Handle* array, int* flag, Status* statuses) {
  APPTRACER_REAL_MPI(MPI_Testall);
  return complete_array(
      count, array, statuses,
      [&](Status* used) { return call_real(real, count, array, flag, used); },
      [&](apptracer::CollectiveCapture& capture, const Handle* saved, const Status* used) {
        for (int i = 0; *flag && i < count; ++i) complete(capture, saved[i], &used[i]);
      });
}

APPTRACER_EXPORT int MPI_Waitany(int count, Handle* array, int* index, Status* status) {
  APPTRACER_REAL_MPI(MPI_Waitany);
  Status own{};
  Status* used = status ? status : &own;
  return complete_array(
      count, array, nullptr, [&](Status*) { return call_real(real, count, array, index, used); },
      [&](apptracer::CollectiveCapture& capture, const Handle* saved, const Status*) {
        if (*index != kUndefined) complete(capture, saved[*index], used);
      });
}

APPTRACER_EXPORT int MPI_Testany(int count, Handle* array, int* index, int* flag, Status* status) {
  APPTRACER_REAL_MPI(MPI_Testany);
  Status own{};
  Status* used = status ? status : &own;
  return complete_array(
      count, array, nullptr,
      [&](Status*) { return call_real(real, count, array, index, flag, used); },
      [&](apptracer::CollectiveCapture& capture, const Handle* saved, const Status*) {
        if (*flag && *index != kUndefined) complete(capture, saved[*index], used);
      });
}

namespace {

// Waitsome / Testsome: `done` of them finished, at `indices`.
template <typename Call>
int complete_some(int count, Handle* array, int* done, int* indices, Status* statuses,
                  Call&& call) {
  return complete_array(
      count, array, statuses, call,
      [&](apptracer::CollectiveCapture& capture, const Handle* saved, const Status* used) {
        for (int k = 0; *done != kUndefined && k < *done; ++k) {
          complete(capture, saved[indices[k]], &used[k]);
        }
      });
}

}  // namespace

APPTRACER_EXPORT int MPI_Waitsome(int count, Handle* array, int* done, int* indices,
                                  Status* statuses) {
  APPTRACER_REAL_MPI(MPI_Waitsome);
  return complete_some(count, array, done, indices, statuses, [&](Status* used) {
    return call_real(real, count, array, done, indices, used);
  });
}

APPTRACER_EXPORT int MPI_Testsome(int count, Handle* array, int* done, int* indices,
                                  Status* statuses) {
  APPTRACER_REAL_MPI(MPI_Testsome);
  return complete_some(count, array, done, indices, statuses, [&](Status* used) {
    return call_real(real, count, array, done, indices, used);
  });
}

// --- collectives ------------------------------------------------------------------------

namespace {

// MPI_IN_PLACE: the operation reads and writes the receive buffer.
const void* source_of(const void* send, const void* recv) {
  return send == in_place() ? recv : send;
}

Operation reduction(CollectiveKind kind, const void* send, void* recv, uint64_t send_bytes,
                    uint64_t recv_bytes, uint64_t count, Handle datatype, Handle op) {
  Operation o;
  o.kind = kind;
  o.send = source_of(send, recv);
  o.send_bytes = send_bytes;
  o.recv = recv;
  o.recv_bytes = recv_bytes;
  o.count = count;
  o.datatype = datatype;
  o.op = op;
  return o;
}

Operation broadcast(void* buffer, int count, Handle datatype, int root, const CommState& comm) {
  Operation o;
  o.kind = CollectiveKind::Broadcast;
  (comm.rank == root ? o.send : o.recv) = buffer;
  o.send_bytes = o.recv_bytes = bytes_of(count, datatype);
  o.count = count;
  o.datatype = datatype;
  o.root_or_peer = root;
  return o;
}

// Only the root receives.
Operation rooted_reduction(const void* send, void* recv, int count, Handle datatype, Handle op,
                           int root, const CommState& comm) {
  uint64_t bytes = bytes_of(count, datatype);
  Operation o = comm.rank == root
                    ? reduction(CollectiveKind::Reduce, send, recv, bytes, bytes, count, datatype, op)
                    : reduction(CollectiveKind::Reduce, send, nullptr, bytes, 0, count, datatype, op);
  o.root_or_peer = root;
  return o;
}

Operation scattered_reduction(const void* send, void* recv, const int* recv_counts,
                              Handle datatype, Handle op, const CommState& comm) {
  uint64_t mine = comm.rank >= 0 && comm.rank < comm.nranks ? bytes_of(recv_counts[comm.rank], datatype) : 0;
  return reduction(CollectiveKind::ReduceScatter, send, recv,
                   bytes_of(recv_counts, comm.nranks, datatype), mine,
                   elements_of(recv_counts, comm.nranks), datatype, op);
}

// Each rank contributes `send_bytes` and the receive buffer holds
// `recv_bytes` (in place: the contribution already sits in it).
Operation exchange(CollectiveKind kind, const void* send, uint64_t send_bytes, void* recv,
                   uint64_t recv_bytes, uint64_t count, Handle datatype) {
  Operation o;
  o.kind = kind;
  o.send = source_of(send, recv);
  o.send_bytes = send == in_place() ? recv_bytes : send_bytes;
  o.recv = recv;
  o.recv_bytes = recv_bytes;
  o.count = count;
  o.datatype = datatype;
  return o;
}

// Gather: every rank sends, the root receives all. Scatter: the root sends
// all, every rank receives its part.
Operation gather(const void* send, int send_count, Handle send_type, void* recv, int recv_count,
                 Handle recv_type, int root, const CommState& comm) {
  Operation o = exchange(CollectiveKind::Gather, send, bytes_of(send_count, send_type), recv,
                         bytes_of(recv_count, recv_type) * comm.nranks, send_count, send_type);
  if (comm.rank != root) o.recv = nullptr;
  o.root_or_peer = root;
  return o;
}

Operation scatter(const void* send, int send_count, Handle send_type, void* recv, int recv_count,
                  Handle recv_type, int root, const CommState& comm) {
  Operation o;
  o.kind = CollectiveKind::Scatter;
  if (comm.rank == root) {
    o.send = send;
    o.send_bytes = bytes_of(send_count, send_type) * comm.nranks;
  }
  if (recv != in_place()) {
    o.recv = recv;
    o.recv_bytes = bytes_of(recv_count, recv_type);
  }
  o.count = recv_count;
  o.datatype = recv_type;
  o.root_or_peer = root;
  return o;
}

Operation no_data(const CommState&) { return Operation{}; }

}  // namespace

APPTRACER_EXPORT int MPI_Barrier(Handle comm) {
  APPTRACER_REAL_MPI(MPI_Barrier);
  return collective(comm, nullptr, no_data, [&] { return call_real(real, comm); });
}

APPTRACER_EXPORT int MPI_Ibarrier(Handle comm, Handle* request) {
  APPTRACER_REAL_MPI(MPI_Ibarrier);
  return collective(comm, request, no_data, [&] { return call_real(real, comm, request); });
}

APPTRACER_EXPORT int MPI_Bcast(void* buffer, int count, Handle datatype, int root, Handle comm) {
  APPTRACER_REAL_MPI(MPI_Bcast);
  return collective(
      comm, nullptr, [&](const CommState& c) { return broadcast(buffer, count, datatype, root, c); },
      [&] { return call_real(real, buffer, count, datatype, root, comm); });
}

APPTRACER_EXPORT int MPI_Ibcast(void* buffer, int count, Handle datatype, int root, Handle comm,
                                Handle* request) {
  APPTRACER_REAL_MPI(MPI_Ibcast);
  return collective(
      comm, request, [&](const CommState& c) { return broadcast(buffer, count, datatype, root, c); },
      [&] { return call_real(real, buffer, count, datatype, root, comm, request); });
}

APPTRACER_EXPORT int MPI_Reduce(const void* send, void* recv, int count, Handle datatype, Handle op,
                                int root, Handle comm) {
  APPTRACER_REAL_MPI(MPI_Reduce);
  return collective(
      comm, nullptr,
      [&](const CommState& c) { return rooted_reduction(send, recv, count, datatype, op, root, c); },
      [&] { return call_real(real, send, recv, count, datatype, op, root, comm); });
}

APPTRACER_EXPORT int MPI_Ireduce(const void* send, void* recv, int count, Handle datatype,
                                 Handle op, int root, Handle comm, Handle* request) {
  APPTRACER_REAL_MPI(MPI_Ireduce);
  return collective(
      comm, request,
      [&](const CommState& c) { return rooted_reduction(send, recv, count, datatype, op, root, c); },
      [&] { return call_real(real, send, recv, count, datatype, op, root, comm, request); });
}

namespace {

// Allreduce, Scan, Exscan: every rank sends and receives `count` elements.
template <typename Call>
int all_reduction(CollectiveKind kind, const void* send, void* recv, int count, Handle datatype,
                  Handle op, Handle comm, Handle* request, Call&& call) {
  return collective(
      comm, request,
      [&](const CommState&) {
        uint64_t bytes = bytes_of(count, datatype);
        return reduction(kind, send, recv, bytes, bytes, count, datatype, op);
      },
      call);
}

}  // namespace

APPTRACER_EXPORT int MPI_Allreduce(const void* send, void* recv, int count, Handle datatype,
                                   Handle op, Handle comm) {
  APPTRACER_REAL_MPI(MPI_Allreduce);
  return all_reduction(CollectiveKind::AllReduce, send, recv, count, datatype, op, comm, nullptr,
                       [&] { return call_real(real, send, recv, count, datatype, op, comm); });
}

APPTRACER_EXPORT int MPI_Iallreduce(const void* send, void* recv, int count, Handle datatype,
                                    Handle op, Handle comm, Handle* request) {
  APPTRACER_REAL_MPI(MPI_Iallreduce);
  return all_reduction(
      CollectiveKind::AllReduce, send, recv, count, datatype, op, comm, request,
      [&] { return call_real(real, send, recv, count, datatype, op, comm, request); });
}

APPTRACER_EXPORT int MPI_Scan(const void* send, void* recv, int count, Handle datatype, Handle op,
                              Handle comm) {
  APPTRACER_REAL_MPI(MPI_Scan);
  return all_reduction(CollectiveKind::Scan, send, recv, count, datatype, op, comm, nullptr,
                       [&] { return call_real(real, send, recv, count, datatype, op, comm); });
}

APPTRACER_EXPORT int MPI_Exscan(const void* send, void* recv, int count, Handle datatype,
                                Handle op, Handle comm) {
  APPTRACER_REAL_MPI(MPI_Exscan);
  return all_reduction(CollectiveKind::Exscan, send, recv, count, datatype, op, comm, nullptr,
                       [&] { return call_real(real, send, recv, count, datatype, op, comm); });
}

APPTRACER_EXPORT int MPI_Reduce_scatter(const void* send, void* recv, const int* recv_counts,
                                        Handle datatype, Handle op, Handle comm) {
  APPTRACER_REAL_MPI(MPI_Reduce_scatter);
  return collective(
      comm, nullptr,
      [&](const CommState& c) {
        return scattered_reduction(send, recv, recv_counts, datatype, op, c);
      },
      [&] { return call_real(real, send, recv, recv_counts, datatype, op, comm); });
}

namespace {

template <typename Call>
int reduce_scatter_block(const void* send, void* recv, int recv_count, Handle datatype, Handle op,
                         Handle comm, Handle* request, Call&& call) {
  return collective(
      comm, request,
      [&](const CommState& c) {
        uint64_t part = bytes_of(recv_count, datatype);
        return reduction(CollectiveKind::ReduceScatter, send, recv, part * c.nranks, part,
                         recv_count, datatype, op);
      },
      call);
}

// Allgather and Alltoall: `per_peer`, the send count is for each peer (Alltoall).
template <typename Call>
int all_exchange(CollectiveKind kind, bool per_peer, const void* send, int send_count,
                 Handle send_type, void* recv, int recv_count, Handle recv_type, Handle comm,
                 Handle* request, Call&& call) {
  return collective(
      comm, request,
      [&](const CommState& c) {
        uint64_t sent = bytes_of(send_count, send_type) * (per_peer ? c.nranks : 1);
        return exchange(kind, send, sent, recv, bytes_of(recv_count, recv_type) * c.nranks,
                        send_count, send_type);
      },
      call);
}

}  // namespace

APPTRACER_EXPORT int MPI_Reduce_scatter_block(const void* send, void* recv, int recv_count,
                                              Handle datatype, Handle op, Handle comm) {
  APPTRACER_REAL_MPI(MPI_Reduce_scatter_block);
  return reduce_scatter_block(send, recv, recv_count, datatype, op, comm, nullptr, [&] {
    return call_real(real, send, recv, recv_count, datatype, op, comm);
  });
}

APPTRACER_EXPORT int MPI_Ireduce_scatter_block(const void* send, void* recv, int recv_count,
                                               Handle datatype, Handle op, Handle comm,
                                               Handle* request) {
  APPTRACER_REAL_MPI(MPI_Ireduce_scatter_block);
  return reduce_scatter_block(send, recv, recv_count, datatype, op, comm, request, [&] {
    return call_real(real, send, recv, recv_count, datatype, op, comm, request);
  });
}

APPTRACER_EXPORT int MPI_Allgather(const void* send, int send_count, Handle send_type, void* recv,
                                   int recv_count, Handle recv_type, Handle comm) {
  APPTRACER_REAL_MPI(MPI_Allgather);
  return all_exchange(CollectiveKind::AllGather, false, send, send_count, send_type, recv,
                      recv_count, recv_type, comm, nullptr, [&] {
                        return call_real(real, send, send_count, send_type, recv, recv_count,
                                         recv_type, comm);
                      });
}

APPTRACER_EXPORT int MPI_Iallgather(const void* send, int send_count, Handle send_type, void* recv,
                                    int recv_count, Handle recv_type, Handle comm,
                                    Handle* request) {
  APPTRACER_REAL_MPI(MPI_Iallgather);
  return all_exchange(CollectiveKind::AllGather, false, send, send_count, send_type, recv,
                      recv_count, recv_type, comm, request, [&] {
                        return call_real(real, send, send_count, send_type, recv, recv_count,
                                         recv_type, comm, request);
                      });
}

APPTRACER_EXPORT int MPI_Alltoall(const void* send, int send_count, Handle send_type, void* recv,
                                  int recv_count, Handle recv_type, Handle comm) {
  APPTRACER_REAL_MPI(MPI_Alltoall);
  return all_exchange(CollectiveKind::AllToAll, true, send, send_count, send_type, recv,
                      recv_count, recv_type, comm, nullptr, [&] {
                        return call_real(real, send, send_count, send_type, recv, recv_count,
                                         recv_type, comm);
                      });
}

APPTRACER_EXPORT int MPI_Ialltoall(const void* send, int send_count, Handle send_type, void* recv,
                                   int recv_count, Handle recv_type, Handle comm,
                                   Handle* request) {
  APPTRACER_REAL_MPI(MPI_Ialltoall);
  return all_exchange(CollectiveKind::AllToAll, true, send, send_count, send_type, recv,
                      recv_count, recv_type, comm, request, [&] {
                        return call_real(real, send, send_count, send_type, recv, recv_count,
                                         recv_type, comm, request);
                      });
}

APPTRACER_EXPORT int MPI_Allgatherv(const void* send, int send_count, Handle send_type, void* recv,
                                    const int* recv_counts, const int* displacements,
                                    Handle recv_type, Handle comm) {
  APPTRACER_REAL_MPI(MPI_Allgatherv);
  return collective(
      comm, nullptr,
      [&](const CommState& c) {
        return exchange(CollectiveKind::AllGather, send, bytes_of(send_count, send_type), recv,
                        bytes_of(recv_counts, c.nranks, recv_type),
                        elements_of(recv_counts, c.nranks), recv_type);
      },
      [&] {
        return call_real(real, send, send_count, send_type, recv, recv_counts, displacements,
                         recv_type, comm);
      });
}

APPTRACER_EXPORT int MPI_Alltoallv(const void* send, const int* send_counts,
                                   const int* send_displacements, Handle send_type, void* recv,
                                   const int* recv_counts, const int* recv_displacements,
                                   Handle recv_type, Handle comm) {
  APPTRACER_REAL_MPI(MPI_Alltoallv);
  return collective(
      comm, nullptr,
      [&](const CommState& c) {
        return exchange(CollectiveKind::AllToAll, send, bytes_of(send_counts, c.nranks, send_type),
                        recv, bytes_of(recv_counts, c.nranks, recv_type),
                        elements_of(send_counts, c.nranks), send_type);
      },
      [&] {
        return call_real(real, send, send_counts, send_displacements, send_type, recv,
                         recv_counts, recv_displacements, recv_type, comm);
      });
}

APPTRACER_EXPORT int MPI_Gather(const void* send, int send_count, Handle send_type, void* recv,
                                int recv_count, Handle recv_type, int root, Handle comm) {
  APPTRACER_REAL_MPI(MPI_Gather);
  return collective(
      comm, nullptr,
      [&](const CommState& c) {
        return gather(send, send_count, send_type, recv, recv_count, recv_type, root, c);
      },
      [&] {
        return call_real(real, send, send_count, send_type, recv, recv_count, recv_type, root,
                         comm);
      });
}

APPTRACER_EXPORT int MPI_Igather(const void* send, int send_count, Handle send_type, void* recv,
                                 int recv_count, Handle recv_type, int root, Handle comm,
                                 Handle* request) {
  APPTRACER_REAL_MPI(MPI_Igather);
  return collective(
      comm, request,
      [&](const CommState& c) {
        return gather(send, send_count, send_type, recv, recv_count, recv_type, root, c);
      },
      [&] {
        return call_real(real, send, send_count, send_type, recv, recv_count, recv_type, root,
                         comm, request);
      });
}

APPTRACER_EXPORT int MPI_Gatherv(const void* send, int send_count, Handle send_type, void* recv,
                                 const int* recv_counts, const int* displacements,
                                 Handle recv_type, int root, Handle comm) {
  APPTRACER_REAL_MPI(MPI_Gatherv);
  return collective(
      comm, nullptr,
      [&](const CommState& c) {
        Operation o = exchange(CollectiveKind::Gather, send, bytes_of(send_count, send_type), recv,
                               c.rank == root ? bytes_of(recv_counts, c.nranks, recv_type) : 0,
                               send_count, send_type);
        if (c.rank != root) o.recv = nullptr;
        o.root_or_peer = root;
        return o;
      },
      [&] {
        return call_real(real, send, send_count, send_type, recv, recv_counts, displacements,
                         recv_type, root, comm);
      });
}

APPTRACER_EXPORT int MPI_Scatter(const void* send, int send_count, Handle send_type, void* recv,
                                 int recv_count, Handle recv_type, int root, Handle comm) {
  APPTRACER_REAL_MPI(MPI_Scatter);
  return collective(
      comm, nullptr,
      [&](const CommState& c) {
        return scatter(send, send_count, send_type, recv, recv_count, recv_type, root, c);
      },
      [&] {
        return call_real(real, send, send_count, send_type, recv, recv_count, recv_type, root,
                         comm);
      });
}

APPTRACER_EXPORT int MPI_Iscatter(const void* send, int send_count, Handle send_type, void* recv,
                                  int recv_count, Handle recv_type, int root, Handle comm,
                                  Handle* request) {
  APPTRACER_REAL_MPI(MPI_Iscatter);
  return collective(
      comm, request,
      [&](const CommState& c) {
        return scatter(send, send_count, send_type, recv, recv_count, recv_type, root, c);
      },
      [&] {
        return call_real(real, send, send_count, send_type, recv, recv_count, recv_type, root,
                         comm, request);
      });
}

APPTRACER_EXPORT int MPI_Scatterv(const void* send, const int* send_counts,
                                  const int* displacements, Handle send_type, void* recv,
                                  int recv_count, Handle recv_type, int root, Handle comm) {
  APPTRACER_REAL_MPI(MPI_Scatterv);
  return collective(
      comm, nullptr,
      [&](const CommState& c) {
        Operation o = scatter(send, 0, send_type, recv, recv_count, recv_type, root, c);
        if (c.rank == root) o.send_bytes = bytes_of(send_counts, c.nranks, send_type);
        return o;
      },
      [&] {
        return call_real(real, send, send_counts, displacements, send_type, recv, recv_count,
                         recv_type, root, comm);
      });
}

// --- communicators ---------------------------------------------------------------------

APPTRACER_EXPORT int MPI_Comm_dup(Handle comm, Handle* created) {
  APPTRACER_REAL_MPI(MPI_Comm_dup);
  return create_communicator(comm, created, [&] { return call_real(real, comm, created); });
}

APPTRACER_EXPORT int MPI_Comm_dup_with_info(Handle comm, Handle info, Handle* created) {
  APPTRACER_REAL_MPI(MPI_Comm_dup_with_info);
  return create_communicator(comm, created,
                             [&] { return call_real(real, comm, info, created); });
}

APPTRACER_EXPORT int MPI_Comm_split(Handle comm, int color, int key, Handle* created) {
  APPTRACER_REAL_MPI(MPI_Comm_split);
  return create_communicator(comm, created,
                             [&] { return call_real(real, comm, color, key, created); });
}

APPTRACER_EXPORT int MPI_Comm_split_type(Handle comm, int split_type, int key, Handle info,
                                         Handle* created) {
  APPTRACER_REAL_MPI(MPI_Comm_split_type);
  return create_communicator(
      comm, created, [&] { return call_real(real, comm, split_type, key, info, created); });
}

APPTRACER_EXPORT int MPI_Comm_create(Handle comm, Handle group, Handle* created) {
  APPTRACER_REAL_MPI(MPI_Comm_create);
  return create_communicator(comm, created,
                             [&] { return call_real(real, comm, group, created); });
}

APPTRACER_EXPORT int MPI_Comm_create_group(Handle comm, Handle group, int tag, Handle* created) {
  APPTRACER_REAL_MPI(MPI_Comm_create_group);
  return create_communicator(comm, created,
                             [&] { return call_real(real, comm, group, tag, created); });
}

APPTRACER_EXPORT int MPI_Comm_free(Handle* comm) {
  APPTRACER_REAL_MPI(MPI_Comm_free);
  apptracer::CollectiveCapture* capture = recording();
  Handle handle = comm ? *comm : 0;
  CommState* state = capture ? apptracer::comm_registry().by_handle(handle) : nullptr;
  int result = forward_inside([&] { return call_real(real, comm); });
  if (state && result == kSuccess) {
    apptracer::emit_communicator_end(*capture, *state, handle);
    apptracer::comm_registry().unbind(handle);
  }
  return result;
}
