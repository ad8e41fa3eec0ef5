#include "collectives/nccl_profiler.h"

#include <atomic>

#include "collectives/collective_capture.h"
#include "collectives/nccl_call_state.h"
#include "collectives/nccl_names.h"

namespace apptracer::nccl {

namespace {

thread_local CallState thread_call;
std::atomic<uint32_t> group_ids{0};

// Event handles: an op id (or nothing, for a launch) and what it is.
enum class HandleKind : uintptr_t {
  InterposedOp = 1,  // the interposer records the call
  ProfiledOp = 2,    // only the profiler saw the call
  Launch = 3,
};

void* make_handle(HandleKind kind, uint64_t op_id) {
  return reinterpret_cast<void*>((static_cast<uintptr_t>(op_id) << 2) |
                                 static_cast<uintptr_t>(kind));
}
HandleKind kind_of(const void* handle) {
  return static_cast<HandleKind>(reinterpret_cast<uintptr_t>(handle) & 3);
}
uint64_t op_of(const void* handle) { return reinterpret_cast<uintptr_t>(handle) >> 2; }

// An API event no interposed call is waiting for: the profiler records it.
void record_profiled_call(CollectiveCapture& capture, CommState& comm, uint64_t op_id,
                          CollectiveKind kind, const ncclProfilerEventDescr_v5_t& d) {
  bool p2p = d.type == kProfileP2pApi;
  Record r = operation_record(comm, kind, op_id);
  CollectiveRecord& op = r.collective;
  op.count = p2p ? d.p2pApi.count : d.collApi.count;
  op.datatype = data_type_of(p2p ? d.p2pApi.datatype : d.collApi.datatype);
  op.element_bytes = static_cast<uint32_t>(data_type_bytes(op.datatype));
  op.stream = capture.stream_id(p2p ? d.p2pApi.stream : d.collApi.stream);
  if (!p2p) {
    op.root_or_peer = d.collApi.root;
    op.seq = comm.next_collective_seq();
  }
  op.start_ns = op.end_ns = capture.now_ns();
  op.flags |= kCollectivePlanFollows;
  if (p2p ? d.p2pApi.graphCaptured : d.collApi.graphCaptured) op.flags |= kCollectiveGraphCaptured;
  emit(capture, r);
}

void on_api_event(CollectiveCapture& capture, CommState& comm, void** handle,
                  const ncclProfilerEventDescr_v5_t& d) {
  bool p2p = d.type == kProfileP2pApi;
  CallState& call = thread_call;
  if (call.depth > 0) {
    // One interposed call may make several events (ncclAlltoAll: a Send and
    // a Recv per peer): all are its one operation.
    if (call.op_id == 0) {
      call.op_id = next_collective_op_id();
      call.profiled_comm = &comm;
      call.graph_captured = p2p ? d.p2pApi.graphCaptured : d.collApi.graphCaptured;
    }
    *handle = make_handle(HandleKind::InterposedOp, call.op_id);
    return;
  }
  CollectiveKind kind;
  if (!collective_kind_of(p2p ? d.p2pApi.func : d.collApi.func, kind)) return;
  uint64_t op_id = next_collective_op_id();
  *handle = make_handle(HandleKind::ProfiledOp, op_id);
  record_profiled_call(capture, comm, op_id, kind, d);
}

void on_plan_event(CollectiveCapture& capture, CommState& comm,
                   const ncclProfilerEventDescr_v5_t& d) {
  const void* parent = d.parentObj;
  HandleKind parent_kind = kind_of(parent);
  if (!parent || parent_kind == HandleKind::Launch) return;
  Record r = collective_record(RecordType::CollectivePlan);
  CollectivePlanRecord& plan = r.collective_plan;
  plan.op_id = op_of(parent);
  plan.seq = CollectiveRecord::kUnassigned;
  if (d.type == kProfileColl) {
    plan.nccl_seq = d.coll.seqNumber;
    plan.send = reinterpret_cast<uint64_t>(d.coll.sendBuff);
    plan.recv = reinterpret_cast<uint64_t>(d.coll.recvBuff);
    plan.peer = -1;
    plan.channels = d.coll.nChannels;
    plan.has_algorithm = true;
    plan.algorithm = algorithm_of(d.coll.algo);
    plan.protocol = protocol_of(d.coll.proto);
  } else {
    plan.nccl_seq = CollectivePlanRecord::kNoNcclSeq;
    uint64_t buffer = reinterpret_cast<uint64_t>(d.p2p.buff);
    CollectiveKind kind;
    bool is_send = collective_kind_of(d.p2p.func, kind) && kind == CollectiveKind::Send;
    (is_send ? plan.send : plan.recv) = buffer;
    plan.peer = d.p2p.peer;
    plan.channels = d.p2p.nChannels;
    // Only here is the peer of a call the profiler alone saw known.
    if (parent_kind == HandleKind::ProfiledOp) {
      plan.seq = is_send ? comm.next_send_seq(d.p2p.peer) : comm.next_recv_seq(d.p2p.peer);
    }
  }
  emit(capture, r);
}

void emit_launch(CollectiveCapture& capture, bool begin) {
  Record r = collective_record(RecordType::NcclLaunch);
  r.nccl_launch.begin = begin;
  emit(capture, r);
}

}  // namespace

CallState& call_state() { return thread_call; }

uint32_t next_group_id() { return group_ids.fetch_add(1, std::memory_order_relaxed) + 1; }

ncclResult_t profiler_init(void** context, uint64_t comm_id, int* event_mask, const char* name,
                           int n_nodes, int nranks, int rank, ncclDebugLogger_t) {
  *context = nullptr;
  CollectiveCapture* capture = collective_capture();
  // The mask is one int for the whole process: leave it alone when not recording.
  if (!capture) return 0;
  CommState* comm = comm_registry().find_or_create(CommLibrary::Nccl, comm_id, rank, nranks);
  CommunicatorFacts facts;
  facts.n_nodes = n_nodes;
  facts.device = capture->current_device();
  if (name && *name) facts.name_id = capture->strings.intern(name);
  emit_communicator(*capture, *comm, facts);
  *event_mask = kEventMask;
  *context = comm;
  return 0;
}

ncclResult_t profiler_start_event(void* context, void** handle, ncclProfilerEventDescr_v5_t* descr) {
  *handle = nullptr;
  CollectiveCapture* capture = collective_capture();
  if (!capture || !context || !descr) return 0;
  CommState& comm = *static_cast<CommState*>(context);
  switch (descr->type) {
    case kProfileCollApi:
    case kProfileP2pApi: on_api_event(*capture, comm, handle, *descr); break;
    case kProfileKernelLaunch:
      emit_launch(*capture, true);
      *handle = make_handle(HandleKind::Launch, 0);
      break;
    case kProfileColl:
    case kProfileP2p: on_plan_event(*capture, comm, *descr); break;
    default: break;
  }
  return 0;
}

ncclResult_t profiler_stop_event(void* handle) {
  CollectiveCapture* capture = collective_capture();
  if (capture && handle && kind_of(handle) == HandleKind::Launch) emit_launch(*capture, false);
  return 0;
}

ncclResult_t profiler_record_event_state(void*, int, ncclProfilerEventStateArgs_v5_t*) { return 0; }

ncclResult_t profiler_finalize(void* context) {
  CollectiveCapture* capture = collective_capture();
  if (capture && context) emit_communicator_end(*capture, *static_cast<CommState*>(context), 0);
  return 0;
}

}  // namespace apptracer::nccl
