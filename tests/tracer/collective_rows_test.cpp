// NCCL and MPI records -> `communicators` and `collectives` rows
// (store/collective_rows.h), without NCCL, MPI or a GPU: the records are
// made by hand in the order the collectives stage emits them on a thread.
#include "store/collective_rows.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "buffer/allocation_registry.h"
#include "buffer/string_table.h"
#include "store/trace_store.h"
#include "store_fixture.h"

namespace apptracer {
namespace {

constexpr uint64_t kCommId = 0xC0FFEE;
constexpr uint32_t kThread = 7;

class CollectiveRowsTest : public StoreFixture {
 protected:
  CollectiveRowsTest() : StoreFixture("collectives") {}

  Record on_thread(RecordType type) {
    Record r{};
    r.type = type;
    r.tid = kThread;
    return r;
  }
  Record allocation(uint64_t address, uint64_t bytes) {
    Record r = on_thread(RecordType::Allocation);
    r.allocation.alloc_id = registry_.add(address, bytes, AllocKind::Device, 0, 1);
    r.allocation.address = address;
    r.allocation.bytes = bytes;
    r.allocation.ns = 1;
    r.allocation.device = 0;
    r.allocation.kind = AllocKind::Device;
    return r;
  }
  Record communicator(CommLibrary library, uint64_t comm_id, int rank, int nranks) {
    Record r = on_thread(RecordType::Communicator);
    CommunicatorRecord& c = r.communicator;
    c.comm_id = comm_id;
    c.rank = rank;
    c.nranks = nranks;
    c.ns = 2;
    c.n_nodes = c.world_rank = c.device = -1;
    c.library = library;
    return r;
  }
  Record call(uint64_t op_id, CollectiveKind kind, uint64_t send, uint64_t recv, uint64_t count,
              uint8_t flags) {
    Record r = on_thread(RecordType::Collective);
    CollectiveRecord& c = r.collective;
    c.op_id = op_id;
    c.comm_id = kCommId;
    c.rank = 0;
    c.nranks = 2;
    c.kind = kind;
    c.send = send;
    c.recv = recv;
    c.count = count;
    c.datatype = DataType::Float32;
    c.element_bytes = 4;
    c.root_or_peer = -1;
    c.stream = 3;
    c.seq = CollectiveRecord::kUnassigned;
    c.start_ns = 100 * op_id;
    c.end_ns = 100 * op_id + 10;
    c.flags = flags;
    return r;
  }
  Record plan(uint64_t op_id, uint64_t nccl_seq, int peer) {
    Record r = on_thread(RecordType::CollectivePlan);
    CollectivePlanRecord& p = r.collective_plan;
    p.op_id = op_id;
    p.nccl_seq = nccl_seq;
    p.seq = CollectiveRecord::kUnassigned;
    p.peer = peer;
    p.channels = 24;
    p.has_algorithm = peer < 0;
    p.algorithm = CollAlgorithm::Ring;
    p.protocol = CollProtocol::Simple;
    return r;
  }
  Record launch_bracket(bool begin) {
    Record r = on_thread(RecordType::NcclLaunch);
    r.nccl_launch.begin = begin;
    return r;
  }
  Record kernel(uint32_t correlation) {
    Record r = on_thread(RecordType::Kernel);
    r.correlation_id = r.own_correlation_id = correlation;
    r.kernel.name_id = strings_.intern("ncclDevKernel_AllReduce_Sum_f32_RING_LL");
    r.kernel.api_start_ns = 150;
    r.kernel.device = -1;
    r.kernel.launch_kind = LaunchKind::Driver;
    return r;
  }
  Record gpu_kernel(uint32_t correlation, uint64_t start, uint64_t end) {
    Record r{};
    r.type = RecordType::GpuKernel;
    r.correlation_id = correlation;
    r.gpu_kernel.start_ns = start;
    r.gpu_kernel.end_ns = end;
    r.gpu_kernel.stream = 3;
    r.gpu_kernel.device = 0;
    return r;
  }
  Record done(uint64_t op_id, int source, int tag, uint64_t bytes) {
    Record r = on_thread(RecordType::CollectiveDone);
    r.collective_done.op_id = op_id;
    r.collective_done.ns = 5000;
    r.collective_done.source = source;
    r.collective_done.tag = tag;
    r.collective_done.bytes = bytes;
    return r;
  }

  void write(std::vector<Record> records) {
    store_->begin();
    store_->write(records.data(), records.size());
    store_->end_pass(UINT64_MAX);
    for (const auto& [id, text] : strings_.take_new()) store_->write_string(id, text);
    store_->commit();
  }
  void finish() {
    store_->begin();
    store_->finish();
    store_->commit();
  }
  Database read() { return Database(path_, Database::Mode::ReadOnly); }

};

TEST_F(CollectiveRowsTest, AnAllReduceJoinsItsCallPlanKernelAndBuffers) {
  Record send = allocation(0x10000, 0x1000);
  Record recv = allocation(0x20000, 0x1000);
  // NCCL's order on the calling thread: the launch bracket and the plan come
  // inside the call, the interposer's record at its end.
  write({send, recv, communicator(CommLibrary::Nccl, kCommId, 0, 2), launch_bracket(true),
         kernel(42), launch_bracket(false), plan(1, 5, -1),
         call(1, CollectiveKind::AllReduce, 0x10000, 0x20100, 256,
              kCollectivePlanFollows),
         gpu_kernel(42, 1000, 1800)});
  finish();
  Database db = read();
  Statement q = db.prepare(
      "SELECT c.kind, c.count, c.send_alloc_id, c.send_bytes, c.recv_alloc_id, c.recv_offset,"
      " c.recv_bytes, c.seq, c.nccl_seq, c.algorithm, c.protocol, c.channels,"
      " c.launch_correlation_id, c.gpu_start_ns, c.gpu_end_ns, m.comm_id, m.rank, m.nranks,"
      " c.stream, c.tid FROM collectives c JOIN communicators m ON m.id = c.communicator_id");
  ASSERT_TRUE(q.step());
  EXPECT_EQ(q.int64(0), static_cast<int>(CollectiveKind::AllReduce));
  EXPECT_EQ(q.int64(1), 256);
  EXPECT_EQ(q.int64(2), send.allocation.alloc_id);
  EXPECT_EQ(q.int64(3), 1024);
  EXPECT_EQ(q.int64(4), recv.allocation.alloc_id);
  EXPECT_EQ(q.int64(5), 0x100);
  EXPECT_EQ(q.int64(6), 1024);
  EXPECT_EQ(q.int64(7), 0) << "the communicator's first collective";
  EXPECT_EQ(q.int64(8), 5);
  EXPECT_EQ(q.int64(9), static_cast<int>(CollAlgorithm::Ring));
  EXPECT_EQ(q.int64(10), static_cast<int>(CollProtocol::Simple));
  EXPECT_EQ(q.int64(11), 24);
  EXPECT_EQ(q.int64(12), 42);
  EXPECT_EQ(q.int64(13), 1000);
  EXPECT_EQ(q.int64(14), 1800);
  EXPECT_EQ(q.int64(15), static_cast<int64_t>(kCommId));
  EXPECT_EQ(q.int64(16), 0);
  EXPECT_EQ(q.int64(17), 2);
  EXPECT_EQ(q.int64(18), 3);
  EXPECT_EQ(q.int64(19), kThread);
  EXPECT_FALSE(q.step());
}

TEST_F(CollectiveRowsTest, TheOperationsOfAGroupShareItsKernel) {
  // ncclGroupStart; ncclSend(peer 1); ncclRecv(peer 1); ncclGroupEnd: the
  // calls return first, the launch and plans come in ncclGroupEnd.
  Record send = call(1, CollectiveKind::Send, 0x10000, 0, 64, kCollectivePlanFollows);
  send.collective.root_or_peer = 1;
  send.collective.seq = 0;
  send.collective.group = 9;
  Record recv = call(2, CollectiveKind::Recv, 0, 0x20000, 64, kCollectivePlanFollows);
  recv.collective.root_or_peer = 1;
  recv.collective.seq = 0;
  recv.collective.group = 9;
  write({allocation(0x10000, 0x1000), allocation(0x20000, 0x1000), send, recv,
         launch_bracket(true), kernel(43), launch_bracket(false),
         plan(1, CollectivePlanRecord::kNoNcclSeq, 1),
         plan(2, CollectivePlanRecord::kNoNcclSeq, 1), gpu_kernel(43, 2000, 2500)});
  finish();
  Database db = read();
  Statement q = db.prepare(
      "SELECT kind, peer, seq, group_id, launch_correlation_id, gpu_start_ns, send_bytes,"
      " recv_bytes, nccl_seq, algorithm FROM collectives ORDER BY id");
  for (CollectiveKind kind : {CollectiveKind::Send, CollectiveKind::Recv}) {
    ASSERT_TRUE(q.step());
    EXPECT_EQ(q.int64(0), static_cast<int>(kind));
    EXPECT_EQ(q.int64(1), 1);
    EXPECT_EQ(q.int64(2), 0);
    EXPECT_EQ(q.int64(3), 9);
    EXPECT_EQ(q.int64(4), 43);
    EXPECT_EQ(q.int64(5), 2000);
    EXPECT_EQ(q.is_null(6), kind == CollectiveKind::Recv);
    EXPECT_EQ(q.is_null(7), kind == CollectiveKind::Send);
    EXPECT_TRUE(q.is_null(8)) << "point to point has no NCCL seqNumber";
    EXPECT_TRUE(q.is_null(9));
  }
  EXPECT_FALSE(q.step());
}

TEST_F(CollectiveRowsTest, AnOperationNoPlanFollowsIsStoredAtOnce) {
  // A 1-rank communicator: NCCL's profiler reports nothing.
  Record op = call(1, CollectiveKind::Broadcast, 0x10000, 0x10000, 8, 0);
  op.collective.root_or_peer = 0;
  op.collective.seq = 3;
  write({op});
  Database db = read();
  Statement q = db.prepare("SELECT root, seq, launch_correlation_id, peer FROM collectives");
  ASSERT_TRUE(q.step()) << "stored in the first pass";
  EXPECT_EQ(q.int64(0), 0);
  EXPECT_EQ(q.int64(1), 3);
  EXPECT_TRUE(q.is_null(2));
  EXPECT_TRUE(q.is_null(3));
}

TEST_F(CollectiveRowsTest, ACallWhosePlanNeverComesIsStoredAfterHoldPasses) {
  write({call(1, CollectiveKind::AllReduce, 0x10000, 0x20000, 8, kCollectivePlanFollows)});
  auto rows = [&] {
    Database db = read();
    Statement q = db.prepare("SELECT count(*) FROM collectives");
    q.step();
    return q.int64(0);
  };
  EXPECT_EQ(rows(), 0) << "waits for its plan";
  for (int pass = 0; pass < StoreOptions{}.activity.hold_passes; ++pass) write({});
  EXPECT_EQ(rows(), 1);
}

TEST_F(CollectiveRowsTest, MpiWildcardReceivesAreNumberedByTheirActualSourceAndTag) {
  Record first = call(1, CollectiveKind::Recv, 0, 0x20000, 16, kCollectiveMpi | kCollectiveNonblocking);
  Record second = call(2, CollectiveKind::Recv, 0, 0x20040, 16, kCollectiveMpi | kCollectiveNonblocking);
  Record other_tag = call(3, CollectiveKind::Recv, 0, 0x20080, 16, kCollectiveMpi | kCollectiveNonblocking);
  for (Record* r : {&first, &second, &other_tag}) {
    r->collective.root_or_peer = -1;  // MPI_ANY_SOURCE
    r->collective.tag = -1;           // MPI_ANY_TAG
    r->collective.recv_bytes = 64;
  }
  write({allocation(0x20000, 0x1000), communicator(CommLibrary::Mpi, kCommId, 0, 2), first, second,
         other_tag});
  // A wildcard receive is numbered once its completion names the sender and
  // tag, in the order completions are seen (exact when the program waits in
  // posting order; receives naming their source are numbered as posted).
  write({done(2, 1, 5, 32), done(3, 1, 6, 64), done(1, 1, 5, 16)});
  finish();
  Database db = read();
  Statement q = db.prepare(
      "SELECT peer, tag, seq, recv_bytes, nonblocking, complete_ns FROM collectives ORDER BY"
      " api_start_ns");
  struct Expected {
    int64_t tag, seq, bytes;
  };
  for (Expected e : {Expected{5, 1, 16}, Expected{5, 0, 32}, Expected{6, 0, 64}}) {
    ASSERT_TRUE(q.step());
    EXPECT_EQ(q.int64(0), 1);
    EXPECT_EQ(q.int64(1), e.tag);
    EXPECT_EQ(q.int64(3), e.bytes);
    EXPECT_EQ(q.int64(4), 1);
    EXPECT_EQ(q.int64(5), 5000);
    EXPECT_EQ(q.int64(2), e.seq);
  }
}

TEST_F(CollectiveRowsTest, WhatThePluginAndTheInterposerSayOfOneCommunicatorIsOneRow) {
  Record from_plugin = communicator(CommLibrary::Nccl, kCommId, 1, 4);
  from_plugin.communicator.n_nodes = 2;
  from_plugin.communicator.name_id = strings_.intern("dp");
  Record from_interposer = communicator(CommLibrary::Nccl, kCommId, 1, 4);
  from_interposer.communicator.handle = 0xABC;
  from_interposer.communicator.device = 1;
  from_interposer.communicator.call_start_ns = 1;  // the init ran from 1 to 3
  from_interposer.communicator.ns = 3;
  Record destroyed = communicator(CommLibrary::Nccl, kCommId, 1, 4);
  destroyed.communicator.ended = true;
  destroyed.communicator.ns = 90;
  write({from_plugin, from_interposer, destroyed});
  finish();
  Database db = read();
  Statement q = db.prepare(
      "SELECT n_nodes, handle, device, created_ns, destroyed_ns, s.text, call_tid, call_start_ns,"
      " call_end_ns FROM communicators JOIN strings s ON s.id = name_id");
  ASSERT_TRUE(q.step());
  EXPECT_EQ(q.int64(0), 2);
  EXPECT_EQ(q.int64(1), 0xABC);
  EXPECT_EQ(q.int64(2), 1);
  EXPECT_EQ(q.int64(3), 2);  // the plugin's, during the init
  EXPECT_EQ(q.int64(4), 90);
  EXPECT_EQ(q.text(5), "dp");
  EXPECT_EQ(q.int64(6), kThread);
  EXPECT_EQ(q.int64(7), 1);
  EXPECT_EQ(q.int64(8), 3);
  EXPECT_FALSE(q.step());
}

TEST(NcclBufferBytes, FollowTheCollectivesDefinitions) {
  auto bytes = [](CollectiveKind kind, int rank, int root) {
    BufferBytes b = nccl_buffer_bytes(kind, 10, 4, 4, rank, root);
    return std::pair<uint64_t, uint64_t>{b.send, b.recv};
  };
  using P = std::pair<uint64_t, uint64_t>;
  EXPECT_EQ(bytes(CollectiveKind::AllReduce, 0, -1), (P{40, 40}));
  EXPECT_EQ(bytes(CollectiveKind::AllGather, 0, -1), (P{40, 160}));
  EXPECT_EQ(bytes(CollectiveKind::ReduceScatter, 0, -1), (P{160, 40}));
  EXPECT_EQ(bytes(CollectiveKind::Broadcast, 1, 0), (P{0, 40}));
  EXPECT_EQ(bytes(CollectiveKind::Broadcast, 0, 0), (P{40, 40}));
  EXPECT_EQ(bytes(CollectiveKind::Reduce, 1, 0), (P{40, 0}));
  EXPECT_EQ(bytes(CollectiveKind::Gather, 0, 0), (P{40, 160}));
  EXPECT_EQ(bytes(CollectiveKind::Scatter, 2, 0), (P{0, 40}));
  EXPECT_EQ(bytes(CollectiveKind::AllToAll, 0, -1), (P{160, 160}));
  EXPECT_EQ(bytes(CollectiveKind::Send, 0, 1), (P{40, 0}));
}

}  // namespace
}  // namespace apptracer
