// The MPI half of the collectives stage without MPI: the interposed API
// (collectives/mpi_api.cpp) against a one-rank MPI with Open MPI's ABI
// (fake_mpi.cpp). The records each call emits are checked one by one.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "buffer/record_buffers.h"
#include "buffer/string_table.h"
#include "collectives/collective_capture.h"
#include "collectives/mpi_runtime.h"

using apptracer::mpi::Handle;
using apptracer::mpi::Status;
struct OmpiObject {
  char padding[64];
};

extern "C" {
extern OmpiObject ompi_mpi_comm_world, ompi_mpi_float, ompi_mpi_int, ompi_mpi_op_sum;
// The interposed API, in this test program.
int MPI_Init(int* argc, char*** argv);
int MPI_Send(const void* buffer, int count, Handle type, int peer, int tag, Handle comm);
int MPI_Recv(void* buffer, int count, Handle type, int peer, int tag, Handle comm, Status* status);
int MPI_Isend(const void* buffer, int count, Handle type, int peer, int tag, Handle comm, Handle* request);
int MPI_Irecv(void* buffer, int count, Handle type, int peer, int tag, Handle comm, Handle* request);
int MPI_Wait(Handle* request, Status* status);
int MPI_Allreduce(const void* send, void* recv, int count, Handle type, Handle op, Handle comm);
int MPI_Comm_dup(Handle comm, Handle* created);
int MPI_Comm_free(Handle* comm);
}

namespace apptracer {
namespace {

const Handle kWorld = reinterpret_cast<Handle>(&ompi_mpi_comm_world);
const Handle kFloat = reinterpret_cast<Handle>(&ompi_mpi_float);
const Handle kInt = reinterpret_cast<Handle>(&ompi_mpi_int);
const Handle kSum = reinterpret_cast<Handle>(&ompi_mpi_op_sum);
constexpr int kProcNull = -2;

uint64_t fake_now() { return 1000; }
int64_t no_stream(const void*) { return -1; }
int32_t no_device() { return -1; }
std::map<std::string, std::string> meta;
void set_meta(const std::string& key, const std::string& value) { meta[key] = value; }

class MpiCapture : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    set_collective_capture(&capture_);
    ASSERT_EQ(MPI_Init(nullptr, nullptr), 0);
    init_records_ = new std::vector<Record>(drain());
  }
  static void TearDownTestSuite() { set_collective_capture(nullptr); }
  void SetUp() override { drain(); }

  static std::vector<Record> drain() {
    std::vector<Record> records;
    buffers_->drain([&](const Record* r, size_t n) { records.insert(records.end(), r, r + n); });
    return records;
  }

  // One for the whole program: a thread's buffer stays attached to it.
  static inline RecordBuffers* const buffers_ = new RecordBuffers(1 << 20);
  static inline StringTable strings_;
  static inline CollectiveCapture capture_{*buffers_, strings_, fake_now, no_stream, no_device, set_meta};
  static inline std::vector<Record>* init_records_ = nullptr;
};

TEST_F(MpiCapture, InitAnnouncesTheWorldAsCommunicatorZero) {
  // The thread's first record names it; then the world.
  ASSERT_EQ(init_records_->size(), 2u);
  EXPECT_EQ((*init_records_)[0].type, RecordType::Thread);
  const Record& world = (*init_records_)[1];
  ASSERT_EQ(world.type, RecordType::Communicator);
  EXPECT_EQ(world.communicator.comm_id, 0u);
  EXPECT_EQ(world.communicator.handle, kWorld);
  EXPECT_EQ(world.communicator.rank, 0);
  EXPECT_EQ(world.communicator.nranks, 1);
  EXPECT_EQ(world.communicator.world_rank, 0);
  EXPECT_EQ(world.communicator.library, CommLibrary::Mpi);
  EXPECT_EQ(meta["mpi_world_rank"], "0");
  EXPECT_EQ(meta["mpi_world_size"], "1");
}

TEST_F(MpiCapture, ABlockingSendAndReceiveAreTwoOperationsWithTheirBytes) {
  float sent[8] = {1, 2, 3, 4, 5, 6, 7, 8}, received[8] = {};
  ASSERT_EQ(MPI_Send(sent, 8, kFloat, 0, 7, kWorld), 0);
  Status status{};
  ASSERT_EQ(MPI_Recv(received, 8, kFloat, 0, 7, kWorld, &status), 0);
  EXPECT_EQ(received[7], 8.0f) << "the call still does its work";
  std::vector<Record> records = drain();
  ASSERT_EQ(records.size(), 2u);
  const CollectiveRecord& send = records[0].collective;
  const CollectiveRecord& recv = records[1].collective;
  EXPECT_EQ(send.kind, CollectiveKind::Send);
  EXPECT_EQ(send.send, reinterpret_cast<uint64_t>(sent));
  EXPECT_EQ(send.send_bytes, 32u);
  EXPECT_EQ(send.recv, 0u);
  EXPECT_EQ(send.root_or_peer, 0);
  EXPECT_EQ(send.tag, 7);
  EXPECT_EQ(send.datatype, DataType::Float32);
  EXPECT_EQ(send.element_bytes, 4u);
  EXPECT_EQ(send.seq, CollectiveRecord::kUnassigned) << "the writer numbers point-to-point messages";
  EXPECT_TRUE(send.flags & kCollectiveMpi);
  EXPECT_FALSE(send.flags & kCollectiveNonblocking);
  EXPECT_EQ(recv.kind, CollectiveKind::Recv);
  EXPECT_EQ(recv.recv, reinterpret_cast<uint64_t>(received));
  EXPECT_EQ(recv.recv_bytes, 32u) << "from the status: what arrived";
  EXPECT_EQ(recv.root_or_peer, 0) << "the status's source";
  EXPECT_NE(send.op_id, recv.op_id);
}

TEST_F(MpiCapture, NonblockingOperationsCompleteAtTheirWait) {
  int sent[4] = {1, 2, 3, 4}, received[16] = {};
  Handle send_request = 0, recv_request = 0;
  ASSERT_EQ(MPI_Irecv(received, 16, kInt, 0, 3, kWorld, &recv_request), 0);
  ASSERT_EQ(MPI_Isend(sent, 4, kInt, 0, 3, kWorld, &send_request), 0);
  ASSERT_EQ(MPI_Wait(&send_request, nullptr), 0);
  Status status{};
  ASSERT_EQ(MPI_Wait(&recv_request, &status), 0);
  std::vector<Record> records = drain();
  ASSERT_EQ(records.size(), 4u);
  const CollectiveRecord& posted = records[0].collective;
  const CollectiveRecord& send = records[1].collective;
  EXPECT_EQ(posted.kind, CollectiveKind::Recv);
  EXPECT_EQ(posted.recv_bytes, 64u) << "as posted: room for 16 ints";
  EXPECT_TRUE(posted.flags & kCollectiveNonblocking);
  EXPECT_EQ(send.kind, CollectiveKind::Send);
  EXPECT_TRUE(send.flags & kCollectiveNonblocking);
  ASSERT_EQ(records[2].type, RecordType::CollectiveDone);
  EXPECT_EQ(records[2].collective_done.op_id, send.op_id);
  ASSERT_EQ(records[3].type, RecordType::CollectiveDone);
  const CollectiveDoneRecord& done = records[3].collective_done;
  EXPECT_EQ(done.op_id, posted.op_id);
  EXPECT_EQ(done.bytes, 16u) << "what arrived: 4 ints";
  EXPECT_EQ(done.source, 0);
  EXPECT_EQ(done.tag, 3);
  EXPECT_FALSE(done.cancelled);
}

TEST_F(MpiCapture, CollectivesAreNumberedPerCommunicatorAndADupIsAnnounced) {
  float in[32] = {}, out[32] = {};
  std::vector<uint32_t> world_seqs;
  for (int i = 0; i < 2; ++i) {
    ASSERT_EQ(MPI_Allreduce(in, out, 32, kFloat, kSum, kWorld), 0);
    std::vector<Record> records = drain();
    ASSERT_EQ(records.size(), 1u);
    const CollectiveRecord& c = records[0].collective;
    EXPECT_EQ(c.kind, CollectiveKind::AllReduce);
    EXPECT_EQ(c.comm_id, 0u);
    EXPECT_EQ(c.op, ReduceOp::Sum);
    EXPECT_EQ(c.count, 32u);
    EXPECT_EQ(c.send_bytes, 128u);
    EXPECT_EQ(c.recv_bytes, 128u);
    world_seqs.push_back(c.seq);
  }
  EXPECT_EQ(world_seqs[1], world_seqs[0] + 1);

  Handle dup = 0;
  ASSERT_EQ(MPI_Comm_dup(kWorld, &dup), 0);
  std::vector<Record> created = drain();
  ASSERT_EQ(created.size(), 1u);
  ASSERT_EQ(created[0].type, RecordType::Communicator);
  const CommunicatorRecord& comm = created[0].communicator;
  EXPECT_EQ(comm.handle, dup);
  EXPECT_EQ(comm.parent_comm_id, 0u);
  EXPECT_EQ(comm.comm_id >> 32, 0u) << "made by world rank 0";
  EXPECT_NE(comm.comm_id, 0u);
  ASSERT_EQ(MPI_Allreduce(in, out, 32, kFloat, kSum, dup), 0);
  std::vector<Record> on_dup = drain();
  ASSERT_EQ(on_dup.size(), 1u);
  EXPECT_EQ(on_dup[0].collective.comm_id, comm.comm_id);
  EXPECT_EQ(on_dup[0].collective.seq, 0u) << "its own numbering";

  ASSERT_EQ(MPI_Comm_free(&dup), 0);
  std::vector<Record> freed = drain();
  ASSERT_EQ(freed.size(), 1u);
  EXPECT_TRUE(freed[0].communicator.ended);
  EXPECT_EQ(freed[0].communicator.comm_id, comm.comm_id);
}

TEST_F(MpiCapture, WhatIsNotTheProgramsOwnMessageOnlyForwards) {
  int value = 5, received = 0;
  ASSERT_EQ(MPI_Send(&value, 1, kInt, kProcNull, 1, kWorld), 0);
  EXPECT_TRUE(drain().empty()) << "MPI_PROC_NULL moves nothing";
  set_collective_capture(nullptr);
  ASSERT_EQ(MPI_Send(&value, 1, kInt, 0, 2, kWorld), 0);
  ASSERT_EQ(MPI_Recv(&received, 1, kInt, 0, 2, kWorld, nullptr), 0);
  set_collective_capture(&capture_);
  EXPECT_EQ(received, 5);
  EXPECT_TRUE(drain().empty()) << "not recording: forwarded only";
}

}  // namespace
}  // namespace apptracer
