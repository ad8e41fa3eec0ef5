// A stand-in for libnccl.so.2 in the collectives capture test: the pnccl*
// functions NCCL exports, each calling the profiler plugin as NCCL 2.28 does
// (its src/enqueue.cc, src/group.cc): the API event synchronously inside the
// call, then, at launch, the kernel-launch bracket and the plan's Coll / P2p
// events whose parent is the API event. A communicator is a FakeComm.
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "collectives/nccl_hash.h"
#include "collectives/nccl_profiler_v5.h"

namespace {

struct FakeComm {
  void* context = nullptr;
  uint64_t comm_id = 0;
  int rank = 0;
  int nranks = 0;
  uint64_t all_reduce_seq = 0;
};

struct UniqueId {
  char internal[apptracer::nccl::kUniqueIdBytes];
};

const ncclProfiler_v5_t* plugin = nullptr;
FakeComm comms[16];  // one per ncclCommInitRank of the test program
int used = 0;
int group_depth = 0;
// Operations of the open group: launched at its end.
struct Queued {
  FakeComm* comm;
  void* api_handle;
  bool send;
  int peer;
  void* buffer;
};
Queued queued[8];
int queued_count = 0;

ncclProfilerEventDescr_v5_t descr(uint64_t type, void* parent) {
  ncclProfilerEventDescr_v5_t d;
  std::memset(&d, 0, sizeof d);
  d.type = type;
  d.parentObj = parent;
  return d;
}

void launch(FakeComm& comm, void (*plans)(FakeComm&, void*), void* arg) {
  void* launch_handle = nullptr;
  auto d = descr(apptracer::nccl::kProfileKernelLaunch, nullptr);
  plugin->startEvent(comm.context, &launch_handle, &d);
  if (launch_handle) plugin->stopEvent(launch_handle);
  plans(comm, arg);
}

void all_reduce_plan(FakeComm& comm, void* api_handle) {
  auto d = descr(apptracer::nccl::kProfileColl, api_handle);
  d.coll.seqNumber = comm.all_reduce_seq++;
  d.coll.func = "AllReduce";
  d.coll.nChannels = 2;
  d.coll.algo = "RING";
  d.coll.proto = "LL128";
  void* handle = nullptr;
  plugin->startEvent(comm.context, &handle, &d);
  if (handle) plugin->stopEvent(handle);
}

void queued_plans(FakeComm&, void*) {
  for (int i = 0; i < queued_count; ++i) {
    auto d = descr(apptracer::nccl::kProfileP2p, queued[i].api_handle);
    d.p2p.func = queued[i].send ? "Send" : "Recv";
    d.p2p.peer = queued[i].peer;
    d.p2p.buff = queued[i].buffer;
    d.p2p.nChannels = 1;
    void* handle = nullptr;
    plugin->startEvent(queued[i].comm->context, &handle, &d);
    if (handle) plugin->stopEvent(handle);
  }
  queued_count = 0;
}

void* api_event(FakeComm& comm, uint64_t type, const char* func, size_t count, void* stream) {
  auto d = descr(type, nullptr);
  if (type == apptracer::nccl::kProfileCollApi) {
    d.collApi.func = func;
    d.collApi.count = count;
    d.collApi.datatype = "ncclFloat32";
    d.collApi.root = -1;
    d.collApi.stream = stream;
  } else {
    d.p2pApi.func = func;
    d.p2pApi.count = count;
    d.p2pApi.datatype = "ncclFloat32";
    d.p2pApi.stream = stream;
  }
  void* handle = nullptr;
  plugin->startEvent(comm.context, &handle, &d);
  if (handle) plugin->stopEvent(handle);
  return handle;
}

int p2p(bool send, void* buffer, size_t count, int peer, void* comm_handle, void* stream) {
  auto& comm = *static_cast<FakeComm*>(comm_handle);
  void* handle = api_event(comm, apptracer::nccl::kProfileP2pApi, send ? "Send" : "Recv", count,
                           stream);
  queued[queued_count++] = {&comm, handle, send, peer, buffer};
  if (group_depth == 0) launch(comm, queued_plans, nullptr);
  return 0;
}

}  // namespace

extern "C" {

void fake_nccl_use_plugin(const ncclProfiler_v5_t* profiler) { plugin = profiler; }

// What NCCL calls the plugin with at the profiler's init: the commHash.
int pncclCommInitRank(void** comm, int nranks, UniqueId id, int rank) {
  FakeComm& c = comms[used++];
  c.comm_id = apptracer::nccl::unique_id_hash(id.internal);
  c.rank = rank;
  c.nranks = nranks;
  int mask = 0;
  plugin->init(&c.context, c.comm_id, &mask, nullptr, 1, nranks, rank, nullptr);
  *comm = &c;
  return 0;
}

int pncclCommUserRank(void* comm, int* rank) {
  *rank = static_cast<FakeComm*>(comm)->rank;
  return 0;
}
int pncclCommCount(void* comm, int* count) {
  *count = static_cast<FakeComm*>(comm)->nranks;
  return 0;
}
int pncclCommCuDevice(void*, int* device) {
  *device = 0;
  return 0;
}
int pncclCommDestroy(void* comm) {
  plugin->finalize(static_cast<FakeComm*>(comm)->context);
  return 0;
}

int pncclGroupStart() {
  ++group_depth;
  return 0;
}
int pncclGroupEnd() {
  if (--group_depth == 0 && queued_count > 0) launch(*queued[0].comm, queued_plans, nullptr);
  return 0;
}

int pncclAllReduce(const void*, void*, size_t count, int, int, void* comm_handle, void* stream) {
  auto& comm = *static_cast<FakeComm*>(comm_handle);
  // A 1-rank communicator: NCCL copies on the stream and tells the profiler nothing.
  if (comm.nranks == 1) return 0;
  void* handle = api_event(comm, apptracer::nccl::kProfileCollApi, "AllReduce", count, stream);
  launch(comm, all_reduce_plan, handle);
  return 0;
}

int pncclSend(const void* buffer, size_t count, int, int peer, void* comm, void* stream) {
  return p2p(true, const_cast<void*>(buffer), count, peer, comm, stream);
}
int pncclRecv(void* buffer, size_t count, int, int peer, void* comm, void* stream) {
  return p2p(false, buffer, count, peer, comm, stream);
}

}  // extern "C"
