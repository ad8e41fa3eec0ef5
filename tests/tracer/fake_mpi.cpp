// A one-rank MPI with Open MPI's ABI, for the MPI interposer's CPU tests
// (mpi_capture_test.cpp): handles are addresses of predefined objects and
// MPI_Status is {source, tag, error, cancelled, count}, as the interposer
// reads them (collectives/mpi_runtime.h). Messages to self queue by tag;
// collectives copy what they send to what they receive.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <vector>

// Open MPI's types written out here, not taken from the tracer's
// mpi_runtime.h: the fake states the ABI on its own, so a wrong assumption
// in the tracer shows up as a failing test.
using Handle = uintptr_t;

struct Status {
  int source;
  int tag;
  int error;
  int cancelled;
  size_t count;
};

#define FAKE_MPI_EXPORT extern "C" __attribute__((visibility("default")))

struct OmpiObject {
  char padding[64];
};
// Defined here (`extern "C" T x;` alone would only declare them).
extern "C" {
__attribute__((visibility("default"))) OmpiObject ompi_mpi_comm_world, ompi_mpi_comm_null, ompi_mpi_byte,
    ompi_mpi_int, ompi_mpi_float, ompi_mpi_double, ompi_mpi_op_sum, ompi_mpi_op_max, ompi_request_null;
}

namespace {

constexpr int kSuccess = 0;
constexpr int kErrType = 3;
constexpr int kErrRequest = 7;
constexpr int kAnyTag = -1;

Handle handle(const OmpiObject& object) { return reinterpret_cast<Handle>(&object); }

int size_of(Handle type) {
  if (type == handle(ompi_mpi_byte)) return 1;
  if (type == handle(ompi_mpi_int) || type == handle(ompi_mpi_float)) return 4;
  if (type == handle(ompi_mpi_double)) return 8;
  return 0;
}

struct Message {
  int tag;
  std::vector<char> data;
};
std::deque<Message> messages;

// A posted receive, completed by the wait; a send completes at once.
struct Request {
  bool receive;
  void* buffer;
  int count;
  Handle type;
  int tag;
};
std::deque<Request> request_objects;    // stable addresses: the handles
std::deque<OmpiObject> communicators;  // made by dup and split

int receive(void* buffer, int count, Handle type, int tag, Status* status) {
  for (auto it = messages.begin(); it != messages.end(); ++it) {
    if (tag != kAnyTag && it->tag != tag) continue;
    size_t bytes = std::min(it->data.size(), static_cast<size_t>(count) * size_of(type));
    if (bytes) std::memcpy(buffer, it->data.data(), bytes);
    if (status) *status = Status{0, it->tag, kSuccess, 0, bytes};
    messages.erase(it);
    return kSuccess;
  }
  return kErrRequest;  // nothing sent: a one-rank MPI would wait forever
}

}  // namespace

FAKE_MPI_EXPORT int PMPI_Init(int*, char***) { return kSuccess; }
FAKE_MPI_EXPORT int PMPI_Init_thread(int*, char***, int required, int* provided) {
  *provided = required;
  return kSuccess;
}
FAKE_MPI_EXPORT int PMPI_Comm_rank(Handle, int* rank) {
  *rank = 0;
  return kSuccess;
}
FAKE_MPI_EXPORT int PMPI_Comm_size(Handle, int* size) {
  *size = 1;
  return kSuccess;
}
FAKE_MPI_EXPORT int PMPI_Type_size(Handle type, int* size) {
  *size = size_of(type);
  return *size ? kSuccess : kErrType;
}
FAKE_MPI_EXPORT int PMPI_Get_count(const Status* status, Handle type, int* count) {
  if (!size_of(type)) return kErrType;
  *count = static_cast<int>(status->count / size_of(type));
  return kSuccess;
}
FAKE_MPI_EXPORT int PMPI_Test_cancelled(const Status* status, int* flag) {
  *flag = status->cancelled;
  return kSuccess;
}
FAKE_MPI_EXPORT int PMPI_Send(const void* buffer, int count, Handle type, int, int tag, Handle) {
  const char* bytes = static_cast<const char*>(buffer);
  messages.push_back({tag, std::vector<char>(bytes, bytes + static_cast<size_t>(count) * size_of(type))});
  return kSuccess;
}
FAKE_MPI_EXPORT int PMPI_Recv(void* buffer, int count, Handle type, int, int tag, Handle, Status* status) {
  return receive(buffer, count, type, tag, status);
}
FAKE_MPI_EXPORT int PMPI_Isend(const void* buffer, int count, Handle type, int peer, int tag, Handle comm,
                               Handle* request) {
  request_objects.push_back({false, nullptr, 0, 0, 0});
  *request = reinterpret_cast<Handle>(&request_objects.back());
  return PMPI_Send(buffer, count, type, peer, tag, comm);
}
FAKE_MPI_EXPORT int PMPI_Irecv(void* buffer, int count, Handle type, int, int tag, Handle, Handle* request) {
  request_objects.push_back({true, buffer, count, type, tag});
  *request = reinterpret_cast<Handle>(&request_objects.back());
  return kSuccess;
}
FAKE_MPI_EXPORT int PMPI_Wait(Handle* request, Status* status) {
  if (*request == handle(ompi_request_null)) return kSuccess;
  const Request& r = *reinterpret_cast<const Request*>(*request);
  *request = handle(ompi_request_null);
  if (!r.receive) {
    if (status) *status = Status{0, 0, kSuccess, 0, 0};
    return kSuccess;
  }
  return receive(r.buffer, r.count, r.type, r.tag, status);
}
FAKE_MPI_EXPORT int PMPI_Allreduce(const void* send, void* recv, int count, Handle type, Handle, Handle) {
  std::memmove(recv, send, static_cast<size_t>(count) * size_of(type));
  return kSuccess;
}
FAKE_MPI_EXPORT int PMPI_Bcast(void*, int, Handle, int, Handle) { return kSuccess; }
FAKE_MPI_EXPORT int PMPI_Barrier(Handle) { return kSuccess; }
FAKE_MPI_EXPORT int PMPI_Comm_dup(Handle, Handle* created) {
  communicators.emplace_back();
  *created = reinterpret_cast<Handle>(&communicators.back());
  return kSuccess;
}
FAKE_MPI_EXPORT int PMPI_Comm_free(Handle* comm) {
  *comm = handle(ompi_mpi_comm_null);
  return kSuccess;
}
FAKE_MPI_EXPORT int PMPI_Finalize() { return kSuccess; }
