#include "collectives/collective_capture.h"

#include <atomic>

namespace apptracer {

namespace {

std::atomic<CollectiveCapture*> capture{nullptr};
std::atomic<uint64_t> op_ids{0};

}  // namespace

void set_collective_capture(CollectiveCapture* c) { capture.store(c, std::memory_order_release); }

CollectiveCapture* collective_capture() {
  CollectiveCapture* c = capture.load(std::memory_order_acquire);
  return c && !c->buffers.closed() ? c : nullptr;
}

uint64_t next_collective_op_id() { return op_ids.fetch_add(1, std::memory_order_relaxed) + 1; }

Record collective_record(RecordType type) {
  Record r{};
  r.type = type;
  return r;
}

void emit(CollectiveCapture& c, Record& record) { c.buffers.append(record); }

void emit_communicator(CollectiveCapture& c, const CommState& comm, const CommunicatorFacts& facts) {
  Record r = collective_record(RecordType::Communicator);
  CommunicatorRecord& out = r.communicator;
  out.comm_id = comm.comm_id;
  out.parent_comm_id = facts.parent_comm_id;
  out.handle = facts.handle;
  out.ns = c.now_ns();
  out.call_start_ns = facts.call_start_ns;
  out.rank = comm.rank;
  out.nranks = comm.nranks;
  out.n_nodes = facts.n_nodes;
  out.world_rank = facts.world_rank;
  out.device = facts.device;
  out.name_id = facts.name_id;
  out.library = comm.library;
  emit(c, r);
}

void emit_communicator_end(CollectiveCapture& c, const CommState& comm, uint64_t handle) {
  Record r = collective_record(RecordType::Communicator);
  CommunicatorRecord& out = r.communicator;
  out.comm_id = comm.comm_id;
  out.handle = handle;
  out.ns = c.now_ns();
  out.rank = comm.rank;
  out.nranks = comm.nranks;
  out.n_nodes = out.world_rank = out.device = -1;
  out.library = comm.library;
  out.ended = true;
  emit(c, r);
}

Record operation_record(const CommState& comm, CollectiveKind kind, uint64_t op_id) {
  Record r = collective_record(RecordType::Collective);
  CollectiveRecord& op = r.collective;
  op.op_id = op_id;
  op.comm_id = comm.comm_id;
  op.rank = comm.rank;
  op.nranks = comm.nranks;
  op.kind = kind;
  op.root_or_peer = -1;
  op.stream = -1;
  op.seq = CollectiveRecord::kUnassigned;
  if (comm.library == CommLibrary::Mpi) op.flags |= kCollectiveMpi;
  return r;
}

void collectives_after_fork() { comm_registry().reset_after_fork(); }

}  // namespace apptracer
