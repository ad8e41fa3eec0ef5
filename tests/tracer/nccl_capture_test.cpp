// The NCCL half of the collectives stage without NCCL or a GPU: the
// interposed API (collectives/nccl_api.cpp) and the profiler plugin
// (nccl_profiler.cpp) against a fake libnccl (fake_nccl.cpp) that calls the
// plugin as NCCL 2.28 does. The records they emit are checked one by one.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "buffer/record_buffers.h"
#include "buffer/string_table.h"
#include "collectives/collective_capture.h"
#include "collectives/nccl_hash.h"
#include "collectives/nccl_profiler_v5.h"

struct TestUniqueId {
  char internal[apptracer::nccl::kUniqueIdBytes];
};

extern "C" {
extern ncclProfiler_v5_t ncclProfiler_v5;
void fake_nccl_use_plugin(const ncclProfiler_v5_t* profiler);
// The interposed API (in this test program) and NCCL's own name for one.
int ncclCommInitRank(void** comm, int nranks, TestUniqueId id, int rank);
int ncclAllReduce(const void* send, void* recv, size_t count, int datatype, int op, void* comm,
                  void* stream);
int ncclSend(const void* send, size_t count, int datatype, int peer, void* comm, void* stream);
int ncclRecv(void* recv, size_t count, int datatype, int peer, void* comm, void* stream);
int ncclGroupStart();
int ncclGroupEnd();
int pncclAllReduce(const void* send, void* recv, size_t count, int datatype, int op, void* comm,
                   void* stream);
}

namespace apptracer {
namespace {

constexpr int kFloat32 = 7;  // ncclFloat32
constexpr int kMax = 2;      // ncclMax
void* const kStream = reinterpret_cast<void*>(0x5);

uint64_t fake_now() { return 1000; }
int64_t fake_stream_id(const void* stream) { return stream == kStream ? 13 : -1; }
int32_t fake_device() { return 0; }
void no_meta(const std::string&, const std::string&) {}

class NcclCapture : public ::testing::Test {
 protected:
  void SetUp() override {
    fake_nccl_use_plugin(&ncclProfiler_v5);
    set_collective_capture(&capture_);
    drain();
  }
  void TearDown() override { set_collective_capture(nullptr); }

  // A communicator of `nranks` from a unique id filled with `fill`.
  void* init(char fill, int nranks, int rank, uint64_t* comm_id) {
    TestUniqueId id;
    std::memset(id.internal, fill, sizeof id.internal);
    *comm_id = nccl::unique_id_hash(id.internal);
    void* comm = nullptr;
    EXPECT_EQ(ncclCommInitRank(&comm, nranks, id, rank), 0);
    return comm;
  }
  std::vector<Record> drain() {
    std::vector<Record> records;
    buffers_->drain([&](const Record* r, size_t n) { records.insert(records.end(), r, r + n); });
    return records;
  }
  std::vector<Record> of_type(const std::vector<Record>& records, RecordType type) {
    std::vector<Record> found;
    for (const Record& r : records) {
      if (r.type == type) found.push_back(r);
    }
    return found;
  }

  // One for the whole program: a thread's buffer stays attached to it.
  static inline RecordBuffers* const buffers_ = new RecordBuffers(1 << 20);
  StringTable strings_;
  CollectiveCapture capture_{*buffers_, strings_, fake_now, fake_stream_id, fake_device, no_meta};
};

TEST_F(NcclCapture, PluginAndInterposerNameACommunicatorByNcclsHash) {
  uint64_t comm_id = 0;
  void* comm = init('a', 2, 1, &comm_id);
  std::vector<Record> communicators = of_type(drain(), RecordType::Communicator);
  ASSERT_EQ(communicators.size(), 2u) << "the plugin's init, then the interposer's";
  for (const Record& r : communicators) {
    EXPECT_EQ(r.communicator.comm_id, comm_id);
    EXPECT_EQ(r.communicator.rank, 1);
    EXPECT_EQ(r.communicator.nranks, 2);
  }
  EXPECT_EQ(communicators[0].communicator.n_nodes, 1);
  EXPECT_EQ(communicators[1].communicator.handle, reinterpret_cast<uint64_t>(comm));
  // The interposer saw the init call: when it was entered (what NCCL
  // allocates until it returns is NCCL's); the plugin did not.
  EXPECT_EQ(communicators[0].communicator.call_start_ns, 0u);
  EXPECT_EQ(communicators[1].communicator.call_start_ns, fake_now());
}

TEST_F(NcclCapture, AnAllReduceIsOneCallRecordAndThePlanNcclMadeForIt) {
  uint64_t comm_id = 0;
  void* comm = init('b', 2, 0, &comm_id);
  drain();
  int send = 0, recv = 0;
  for (int i = 0; i < 2; ++i) ASSERT_EQ(ncclAllReduce(&send, &recv, 256, kFloat32, kMax, comm, kStream), 0);
  std::vector<Record> records = drain();
  ASSERT_EQ(records.size(), 8u);
  // NCCL's order inside each call: launch bracket, plan; the call's record last.
  EXPECT_EQ(records[0].type, RecordType::NcclLaunch);
  EXPECT_TRUE(records[0].nccl_launch.begin);
  EXPECT_EQ(records[1].type, RecordType::NcclLaunch);
  EXPECT_FALSE(records[1].nccl_launch.begin);
  for (int i = 0; i < 2; ++i) {
    const Record& plan = records[4 * i + 2];
    const Record& call = records[4 * i + 3];
    ASSERT_EQ(plan.type, RecordType::CollectivePlan);
    ASSERT_EQ(call.type, RecordType::Collective);
    EXPECT_EQ(plan.collective_plan.op_id, call.collective.op_id);
    EXPECT_EQ(plan.collective_plan.nccl_seq, static_cast<uint64_t>(i));
    EXPECT_EQ(plan.collective_plan.algorithm, CollAlgorithm::Ring);
    EXPECT_EQ(plan.collective_plan.protocol, CollProtocol::Ll128);
    EXPECT_EQ(plan.collective_plan.channels, 2);
    const CollectiveRecord& c = call.collective;
    EXPECT_EQ(c.comm_id, comm_id);
    EXPECT_EQ(c.kind, CollectiveKind::AllReduce);
    EXPECT_EQ(c.op, ReduceOp::Max) << "only the interposer sees the operator";
    EXPECT_EQ(c.datatype, DataType::Float32);
    EXPECT_EQ(c.element_bytes, 4u);
    EXPECT_EQ(c.count, 256u);
    EXPECT_EQ(c.send, reinterpret_cast<uint64_t>(&send));
    EXPECT_EQ(c.recv, reinterpret_cast<uint64_t>(&recv));
    EXPECT_EQ(c.seq, static_cast<uint32_t>(i));
    EXPECT_EQ(c.stream, 13);
    EXPECT_EQ(c.group, 0u);
    EXPECT_TRUE(c.flags & kCollectivePlanFollows);
  }
}

TEST_F(NcclCapture, AGroupsSendAndRecvAreNumberedPerPeerAndPlannedAtItsEnd) {
  uint64_t comm_id = 0;
  void* comm = init('c', 2, 0, &comm_id);
  drain();
  int send = 0, recv = 0;
  ASSERT_EQ(ncclGroupStart(), 0);
  ASSERT_EQ(ncclSend(&send, 4, kFloat32, 1, comm, kStream), 0);
  ASSERT_EQ(ncclRecv(&recv, 4, kFloat32, 1, comm, kStream), 0);
  ASSERT_EQ(ncclGroupEnd(), 0);
  std::vector<Record> records = drain();
  std::vector<Record> calls = of_type(records, RecordType::Collective);
  std::vector<Record> plans = of_type(records, RecordType::CollectivePlan);
  ASSERT_EQ(calls.size(), 2u);
  ASSERT_EQ(plans.size(), 2u);
  EXPECT_EQ(records[0].type, RecordType::Collective) << "calls return before the group launches";
  EXPECT_EQ(calls[0].collective.kind, CollectiveKind::Send);
  EXPECT_EQ(calls[1].collective.kind, CollectiveKind::Recv);
  EXPECT_NE(calls[0].collective.group, 0u);
  EXPECT_EQ(calls[0].collective.group, calls[1].collective.group);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(calls[i].collective.seq, 0u) << "the first message each way with peer 1";
    EXPECT_EQ(calls[i].collective.root_or_peer, 1);
    EXPECT_EQ(plans[i].collective_plan.op_id, calls[i].collective.op_id);
    EXPECT_EQ(plans[i].collective_plan.peer, 1);
  }
  EXPECT_EQ(plans[0].collective_plan.send, reinterpret_cast<uint64_t>(&send));
  EXPECT_EQ(plans[1].collective_plan.recv, reinterpret_cast<uint64_t>(&recv));
  ASSERT_EQ(ncclSend(&send, 4, kFloat32, 1, comm, kStream), 0);
  EXPECT_EQ(of_type(drain(), RecordType::Collective)[0].collective.seq, 1u);
}

// NCCL works, and sets up connections, inside the outermost ncclGroupEnd:
// its window is recorded (nested groups' ends are not), after the plans it made.
TEST_F(NcclCapture, TheOutermostGroupsEndIsRecorded) {
  uint64_t comm_id = 0;
  void* comm = init('g', 2, 0, &comm_id);
  drain();
  int send = 0, recv = 0;
  ASSERT_EQ(ncclGroupStart(), 0);
  ASSERT_EQ(ncclGroupStart(), 0);
  ASSERT_EQ(ncclSend(&send, 4, kFloat32, 1, comm, kStream), 0);
  ASSERT_EQ(ncclGroupEnd(), 0);
  ASSERT_EQ(ncclRecv(&recv, 4, kFloat32, 1, comm, kStream), 0);
  ASSERT_EQ(ncclGroupEnd(), 0);
  std::vector<Record> records = drain();
  std::vector<Record> calls = of_type(records, RecordType::Collective);
  std::vector<Record> groups = of_type(records, RecordType::NcclGroup);
  ASSERT_EQ(calls.size(), 2u);
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(records.back().type, RecordType::NcclGroup);
  EXPECT_EQ(groups[0].nccl_group.group, calls[0].collective.group);
  EXPECT_GE(groups[0].nccl_group.start_ns, calls[1].collective.end_ns);
  EXPECT_LE(groups[0].nccl_group.start_ns, groups[0].nccl_group.end_ns);
  ASSERT_EQ(ncclSend(&send, 4, kFloat32, 1, comm, kStream), 0);
  EXPECT_TRUE(of_type(drain(), RecordType::NcclGroup).empty()) << "no group, no group's end";
}

TEST_F(NcclCapture, AOneRankCommunicatorsCallIsRecordedThoughNcclReportsNothing) {
  uint64_t comm_id = 0;
  void* comm = init('d', 1, 0, &comm_id);
  drain();
  int buffer = 0;
  ASSERT_EQ(ncclAllReduce(&buffer, &buffer, 1, kFloat32, 0, comm, kStream), 0);
  std::vector<Record> records = drain();
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].collective.op, ReduceOp::Sum);
  EXPECT_FALSE(records[0].collective.flags & kCollectivePlanFollows) << "no plan will come";
}

TEST_F(NcclCapture, TheProfilerAloneRecordsCallsTheInterposerDidNotSee) {
  uint64_t comm_id = 0;
  void* comm = init('e', 2, 0, &comm_id);
  drain();
  int send = 0, recv = 0;
  // As a statically linked NCCL would: its own function, not the interposed one.
  ASSERT_EQ(pncclAllReduce(&send, &recv, 8, kFloat32, kMax, comm, kStream), 0);
  std::vector<Record> calls = of_type(drain(), RecordType::Collective);
  ASSERT_EQ(calls.size(), 1u);
  const CollectiveRecord& c = calls[0].collective;
  EXPECT_EQ(c.comm_id, comm_id);
  EXPECT_EQ(c.kind, CollectiveKind::AllReduce);
  EXPECT_EQ(c.count, 8u);
  EXPECT_EQ(c.datatype, DataType::Float32);
  EXPECT_EQ(c.stream, 13);
  EXPECT_EQ(c.seq, 0u);
  EXPECT_TRUE(c.flags & kCollectivePlanFollows);
}

TEST_F(NcclCapture, WhileNotRecordingCallsOnlyForward) {
  uint64_t comm_id = 0;
  void* comm = init('f', 2, 0, &comm_id);
  set_collective_capture(nullptr);
  int buffer = 0;
  EXPECT_EQ(ncclAllReduce(&buffer, &buffer, 1, kFloat32, 0, comm, kStream), 0);
  EXPECT_EQ(of_type(drain(), RecordType::Collective).size(), 0u);
}

}  // namespace
}  // namespace apptracer
