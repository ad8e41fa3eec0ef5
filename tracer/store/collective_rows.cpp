#include "store/collective_rows.h"

#include <algorithm>
#include <vector>

namespace apptracer {

namespace {

std::optional<int64_t> nonnegative(int64_t value) {
  return value >= 0 ? std::optional<int64_t>(value) : std::nullopt;
}

bool is_rooted(CollectiveKind kind) {
  return kind == CollectiveKind::Broadcast || kind == CollectiveKind::Reduce ||
         kind == CollectiveKind::Gather || kind == CollectiveKind::Scatter;
}

CommLibrary library_of(const CollectiveRecord& c) {
  return c.flags & kCollectiveMpi ? CommLibrary::Mpi : CommLibrary::Nccl;
}

}  // namespace

BufferBytes nccl_buffer_bytes(CollectiveKind kind, uint64_t count, uint64_t element_bytes,
                              int nranks, int rank, int root) {
  uint64_t one = count * element_bytes;
  uint64_t all = one * static_cast<uint64_t>(std::max(nranks, 1));
  bool is_root = rank == root;
  switch (kind) {
    case CollectiveKind::AllReduce: return {one, one};
    case CollectiveKind::Broadcast: return {is_root ? one : 0, one};
    case CollectiveKind::Reduce: return {one, is_root ? one : 0};
    case CollectiveKind::AllGather: return {one, all};
    case CollectiveKind::ReduceScatter: return {all, one};
    case CollectiveKind::AllToAll: return {all, all};
    case CollectiveKind::Gather: return {one, is_root ? all : 0};
    case CollectiveKind::Scatter: return {is_root ? all : 0, one};
    case CollectiveKind::Send: return {one, 0};
    case CollectiveKind::Recv: return {0, one};
    default: return {};
  }
}

CollectiveRows::CollectiveRows(Database& db, AddressResolver& resolver, int hold_passes,
                               int late_passes)
    : db_(db),
      resolver_(resolver),
      hold_passes_(hold_passes),
      late_passes_(late_passes),
      communicators_(db, OnConflict::Replace),
      collectives_(db, OnConflict::Replace) {}

void CollectiveRows::write(const Record& r) {
  switch (r.type) {
    case RecordType::Communicator: write_communicator(r); break;
    case RecordType::Collective: write_call(r); break;
    case RecordType::CollectivePlan: write_plan(r); break;
    case RecordType::CollectiveDone: write_done(r); break;
    case RecordType::NcclLaunch: write_launch(r); break;
    default: break;
  }
}

// --- communicators ------------------------------------------------------------------

CommunicatorRow& CollectiveRows::communicator(CommLibrary library, uint64_t comm_id, int32_t rank,
                                              int32_t nranks, uint64_t ns) {
  auto [it, inserted] = communicator_rows_.try_emplace(CommKey{library, comm_id, rank});
  CommunicatorRow& row = it->second;
  if (inserted) {
    row.id = next_communicator_id_++;
    row.library = library;
    row.comm_id = static_cast<int64_t>(comm_id);
    row.rank = rank;
    row.nranks = nranks;
    row.created_ns = static_cast<int64_t>(ns);
    communicators_.insert(row);
  }
  return row;
}

// Several sources describe one communicator (the profiler plugin, the
// interposer): each fills in what it knows.
void CollectiveRows::write_communicator(const Record& r) {
  const CommunicatorRecord& c = r.communicator;
  CommunicatorRow& row = communicator(c.library, c.comm_id, c.rank, c.nranks, c.ns);
  if (c.ended) {
    if (!row.destroyed_ns) row.destroyed_ns = static_cast<int64_t>(c.ns);
  } else {
    row.created_ns = std::min(row.created_ns, static_cast<int64_t>(c.ns));
    if (c.parent_comm_id) row.parent_comm_id = static_cast<int64_t>(c.parent_comm_id);
    if (c.n_nodes >= 0) row.n_nodes = c.n_nodes;
    if (c.world_rank >= 0) row.world_rank = c.world_rank;
    if (c.name_id) row.name_id = c.name_id;
    if (c.device >= 0) row.device = c.device;
    if (c.call_start_ns) {
      row.call_tid = static_cast<int64_t>(r.tid);
      row.call_start_ns = static_cast<int64_t>(c.call_start_ns);
      row.call_end_ns = static_cast<int64_t>(c.ns);
    }
  }
  if (c.handle && !row.handle) row.handle = static_cast<int64_t>(c.handle);
  communicators_.insert(row);
}

// --- operations ---------------------------------------------------------------------

void CollectiveRows::write_call(const Record& r) {
  Pending& p = pending_[r.collective.op_id];
  p.call = r;
  p.tid = r.tid;
  if (r.collective.seq != CollectiveRecord::kUnassigned) p.seq = r.collective.seq;
  // A new call on this thread: plans after it belong to a launch after it.
  launches_[r.tid].last = 0;
  number_point_to_point(p);
  store_if_complete(p);
}

void CollectiveRows::write_plan(const Record& r) {
  const CollectivePlanRecord& plan = r.collective_plan;
  Pending& p = pending_[plan.op_id];
  // An operation split over several plan records (ncclAlltoAll: one per
  // peer) takes the first.
  if (p.plan) return;
  p.plan = plan;
  if (plan.seq != CollectiveRecord::kUnassigned && !p.seq) p.seq = plan.seq;
  auto launch = launches_.find(r.tid);
  if (launch != launches_.end() && launch->second.last) p.launch = launch->second.last;
  if (p.id) {
    store(p);
  } else {
    store_if_complete(p);
  }
}

void CollectiveRows::write_done(const Record& r) {
  Pending& p = pending_[r.collective_done.op_id];
  p.done = r.collective_done;
  number_point_to_point(p);
  if (p.id) {
    store(p);
  } else {
    store_if_complete(p);
  }
}

void CollectiveRows::write_launch(const Record& r) {
  ThreadLaunch& launch = launches_[r.tid];
  if (r.nccl_launch.begin) {
    launch.open = true;
    launch.kernel = 0;
    launch.last = 0;
  } else {
    launch.open = false;
    launch.last = launch.kernel;
  }
}

void CollectiveRows::kernel_launched(const Record& r) {
  auto launch = launches_.find(r.tid);
  if (launch != launches_.end() && launch->second.open) launch->second.kernel = r.correlation_id;
}

// MPI point to point is numbered here, in the order sends and receives were
// posted, once the receive's source and tag are known (a wildcard receive's
// at its completion): the k-th message from a sender to a receiver with a
// tag matches the k-th receive of it (MPI's non-overtaking rule).
void CollectiveRows::number_point_to_point(Pending& p) {
  if (p.seq || !p.call) return;
  const CollectiveRecord& c = p.call->collective;
  if (!(c.flags & kCollectiveMpi) || !is_point_to_point(c.kind)) return;
  int64_t peer = c.root_or_peer;
  int64_t tag = c.tag;
  if (p.done && p.done->source >= 0) {
    peer = p.done->source;
    tag = p.done->tag;
  }
  if (peer < 0 || tag < 0) return;
  int64_t communicator_id = *communicator(CommLibrary::Mpi, c.comm_id, c.rank, c.nranks, c.start_ns).id.value;
  bool sends = c.kind == CollectiveKind::Send;
  p.seq = point_to_point_[{communicator_id, sends ? c.rank : peer, sends ? peer : c.rank, tag}]++;
}

bool CollectiveRows::complete(const Pending& p) const {
  if (!p.call) return false;
  uint8_t flags = p.call->collective.flags;
  bool awaits_plan = (flags & kCollectivePlanFollows) && !(flags & kCollectiveGraphCaptured);
  return (!awaits_plan || p.plan) && (!(flags & kCollectiveNonblocking) || p.done);
}

CollectiveRow CollectiveRows::build_row(const Pending& p) {
  const CollectiveRecord& c = p.call->collective;
  const CommunicatorRow& comm = communicator(library_of(c), c.comm_id, c.rank, c.nranks, c.start_ns);
  CollectiveRow row;
  row.id.value = p.id;
  row.communicator_id = *comm.id.value;
  row.kind = c.kind;
  row.datatype = c.datatype;
  row.element_bytes = c.element_bytes;
  row.count = static_cast<int64_t>(c.count);
  if (c.op != ReduceOp{}) row.reduce_op = c.op;
  int64_t peer = c.root_or_peer;
  if (is_point_to_point(c.kind)) {
    if (p.plan && p.plan->peer >= 0) peer = p.plan->peer;
    if (p.done && p.done->source >= 0) peer = p.done->source;
    row.peer = nonnegative(peer);
    if (c.flags & kCollectiveMpi) row.tag = p.done && p.done->source >= 0 ? p.done->tag : c.tag;
  } else if (is_rooted(c.kind)) {
    row.root = nonnegative(c.root_or_peer);
  }
  // Operations only the profiler saw have their buffers in the plan.
  uint64_t send = c.send ? c.send : p.plan ? p.plan->send : 0;
  uint64_t recv = c.recv ? c.recv : p.plan ? p.plan->recv : 0;
  BufferBytes bytes{c.send_bytes, c.recv_bytes};
  if (!(c.flags & kCollectiveMpi)) {
    bytes = nccl_buffer_bytes(c.kind, c.count, c.element_bytes, c.nranks, c.rank, c.root_or_peer);
  }
  if (p.done && p.done->bytes != UINT64_MAX && c.kind == CollectiveKind::Recv) {
    bytes.recv = p.done->bytes;
  }
  if (send && bytes.send) {
    Resolved at = resolver_.touch(send, c.start_ns);
    row.send_address = static_cast<int64_t>(send);
    row.send_bytes = static_cast<int64_t>(bytes.send);
    row.send_alloc_id = at.alloc_id;
    row.send_offset = at.offset;
    row.device = at.device;
  }
  if (recv && bytes.recv) {
    Resolved at = resolver_.touch(recv, c.start_ns);
    row.recv_address = static_cast<int64_t>(recv);
    row.recv_bytes = static_cast<int64_t>(bytes.recv);
    row.recv_alloc_id = at.alloc_id;
    row.recv_offset = at.offset;
    if (at.device) row.device = at.device;
  }
  if (comm.device) row.device = comm.device;
  if (c.stream >= 0) row.stream = c.stream;
  row.seq = p.seq;
  if (p.plan && p.plan->nccl_seq != CollectivePlanRecord::kNoNcclSeq) {
    row.nccl_seq = static_cast<int64_t>(p.plan->nccl_seq);
  }
  if (c.group) row.group_id = c.group;
  if (p.plan && p.plan->has_algorithm) {
    row.algorithm = p.plan->algorithm;
    row.protocol = p.plan->protocol;
  }
  if (p.plan) row.channels = p.plan->channels;
  row.nonblocking = (c.flags & kCollectiveNonblocking) ? 1 : 0;
  row.tid = p.tid;
  if (p.launch) row.launch_correlation_id = p.launch;
  row.api_start_ns = static_cast<int64_t>(c.start_ns);
  row.api_end_ns = static_cast<int64_t>(c.end_ns);
  if (p.done) row.complete_ns = static_cast<int64_t>(p.done->ns);
  return row;
}

void CollectiveRows::store(Pending& p) {
  if (!p.call) return;
  if (!p.id) {
    p.id = next_collective_id_++;
    p.passes = 0;
  }
  collectives_.insert(build_row(p));
}

void CollectiveRows::store_if_complete(Pending& p) {
  if (!p.id && complete(p)) store(p);
}

void CollectiveRows::end_pass() {
  for (auto it = pending_.begin(); it != pending_.end();) {
    Pending& p = it->second;
    ++p.passes;
    bool awaits_completion =
        p.call && (p.call->collective.flags & kCollectiveNonblocking) && !p.done;
    if (!p.id && p.call && !awaits_completion && p.passes > hold_passes_) store(p);
    // Stored rows are kept a while for late records; parts whose call never
    // came are dropped after as long.
    bool expired = p.id ? p.passes > late_passes_ : !p.call && p.passes > late_passes_;
    it = expired ? pending_.erase(it) : std::next(it);
  }
}

void CollectiveRows::finish() {
  std::vector<Pending*> waiting;
  for (auto& [op_id, p] : pending_) {
    if (!p.id && p.call) waiting.push_back(&p);
  }
  // In call order, as they would have been stored.
  std::sort(waiting.begin(), waiting.end(), [](const Pending* a, const Pending* b) {
    return a->call->collective.op_id < b->call->collective.op_id;
  });
  for (Pending* p : waiting) store(*p);
  pending_.clear();
  db_.exec(
      "UPDATE collectives SET "
      " gpu_start_ns = (SELECT min(k.gpu_start_ns) FROM kernels k"
      "                 WHERE k.call_correlation_id = collectives.launch_correlation_id),"
      " gpu_end_ns = (SELECT max(k.gpu_end_ns) FROM kernels k"
      "               WHERE k.call_correlation_id = collectives.launch_correlation_id),"
      " device = coalesce(device, (SELECT k.device FROM kernels k"
      "               WHERE k.call_correlation_id = collectives.launch_correlation_id LIMIT 1))"
      " WHERE launch_correlation_id IS NOT NULL");
}

}  // namespace apptracer
