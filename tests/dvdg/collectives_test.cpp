// Collectives and messages across ranks: one trace per rank,
// merged, gives one DVDG in which an all-reduce is one op reading every
// rank's send buffer and writing every rank's receive buffer, and a message
// joins the sender's value to the receiver's. Traces are synthetic; both
// ranks use the same addresses, as processes do.
#include <gtest/gtest.h>
#include <unistd.h>

#include <set>
#include <sstream>

#include "dvdg_fixture.h"
#include "analyzer/dvdg/graph_builder.h"
#include "analyzer/dvdg/graph_store.h"
#include "analyzer/dvdg/labels.h"
#include "analyzer/merge/merge.h"
#include "analyzer/dvdg/queries.h"
#include "scratch_dir.h"
#include "trace_builder.h"
#include "analyzer/trace/trace_file.h"

namespace apptracer::dvdg {
namespace {

constexpr int64_t kWorld = 0x5eed;
constexpr int64_t kBytes = 4096;
constexpr int64_t kGrad = 0x7f0000000000;
constexpr int64_t kOut = 0x7f0000010000;
constexpr int64_t kParam = 0x7f0000020000;
constexpr int64_t kCommStream = 7;     // where the NCCL calls run
constexpr int64_t kComputeStream = 5;  // a framework's own stream

// One rank's process. Its clock starts at `clock` (rank 1's runs later, so
// only the collective's join, not time, can put its producers first).
class RankTrace {
 public:
  RankTrace(const std::string& path, int64_t rank, int64_t clock,
            CommLibrary library = CommLibrary::Nccl)
      : builder_(path), rank_(rank), clock_(clock), library_(library) {
    builder_.set_meta("pid", std::to_string(100 + rank));
    testing::DeviceRow device;
    device.uuid = "GPU-" + std::to_string(rank);
    builder_.add_device(device);
    apptracer::CommunicatorRow comm;
    comm.library = library;
    comm.comm_id = kWorld;
    comm.rank = rank;
    comm.nranks = 2;
    communicator_ = builder_.add(comm);
  }

  int64_t buffer(int64_t address, AllocKind kind = AllocKind::Device) {
    testing::AllocationRow row;
    row.kind = kind;
    if (kind != AllocKind::Device) row.device = std::nullopt;
    row.address = address;
    row.bytes = kBytes;
    row.alloc_ns = clock_;
    return builder_.add(row);
  }

  // A caching allocator's block: all of `parent`, live from `from` to `to`.
  void block(int64_t parent, int64_t from, int64_t to) {
    builder_.add_block(parent, 0, kBytes, clock_ + from, clock_ + to);
  }

  // A blocking copy between a device buffer and a pageable host one.
  void copy(CopyKind kind, int64_t src, int64_t dst, int64_t at) {
    testing::MemcpyRow row;
    row.kind = kind;
    bool to_host = kind == CopyKind::DtoH;
    row.src_memory = to_host ? MemoryKind::Device : MemoryKind::Pageable;
    row.dst_memory = to_host ? MemoryKind::Pageable : MemoryKind::Device;
    row.src_device = to_host ? std::optional<int64_t>(0) : std::nullopt;
    row.dst_device = to_host ? std::nullopt : std::optional<int64_t>(0);
    row.src_address = address_of(src);
    row.dst_address = address_of(dst);
    row.src_alloc_id = src;
    row.dst_alloc_id = dst;
    row.src_offset = row.dst_offset = 0;
    row.bytes = kBytes;
    row.stream = kCommStream;
    row.api_start_ns = clock_ + at;
    row.gpu_start_ns = clock_ + at + 5;
    row.gpu_end_ns = clock_ + at + 9;
    builder_.add(row);
  }

  int64_t kernel(const std::string& name,
                 const std::vector<std::pair<int64_t, AccessKind>>& args, int64_t at,
                 int64_t correlation = 0, int64_t stream = kCommStream) {
    testing::KernelRow row;
    row.mangled_name = "_Z" + name;
    row.demangled_name = name;
    row.stream = stream;
    row.call_correlation_id = correlation;
    row.api_start_ns = clock_ + at;
    row.gpu_start_ns = clock_ + at + 5;
    row.gpu_end_ns = clock_ + at + 9;
    int64_t id = builder_.add(row);
    int64_t index = 0;
    for (const auto& [alloc_id, access] : args) {
      testing::KernelArgRow arg;
      arg.kernel_id = id;
      arg.param_index = index;
      arg.offset = 8 * index++;
      arg.alloc_id = alloc_id;
      arg.alloc_offset = 0;
      arg.access = access;
      arg.access_source = access == AccessKind::Read ? AccessSource::ConstSignature
                                                     : AccessSource::Assumed;
      builder_.add(arg);
    }
    return id;
  }

  // An event recorded on `from` at `at` and waited for by `to` at `at + 1`.
  void event(int64_t from, int64_t to, int64_t at) {
    testing::StreamEventRow record;
    record.event_handle = 0xe0 + at;
    record.stream = from;
    record.ns = clock_ + at;
    builder_.add(record);
    testing::StreamEventRow wait = record;
    wait.kind = StreamEventKind::Wait;
    wait.stream = to;
    wait.ns = clock_ + at + 1;
    builder_.add(wait);
  }

  // A collective or point-to-point call at `at`: NCCL's is run by an NCCL
  // kernel that (as NCCL's do) points at its buffers; MPI's runs on the host
  // and returns `host_ns` later.
  void call(CollectiveKind kind, std::optional<int64_t> send, std::optional<int64_t> recv,
            int64_t seq, int64_t at, std::optional<int64_t> peer = std::nullopt,
            int64_t recv_bytes = kBytes, int64_t host_ns = 2) {
    apptracer::CollectiveRow row;
    row.communicator_id = communicator_;
    row.kind = kind;
    row.datatype = DataType::Float32;
    row.element_bytes = 4;
    row.count = kBytes / 4;
    row.seq = seq;
    row.peer = peer;
    row.tid = 1;
    row.stream = kCommStream;
    row.device = 0;
    if (send) {
      row.send_address = address_of(*send);
      row.send_bytes = kBytes;
      row.send_alloc_id = *send;
      row.send_offset = 0;
    }
    if (recv) {
      row.recv_address = address_of(*recv);
      row.recv_bytes = recv_bytes;
      row.recv_alloc_id = *recv;
      row.recv_offset = 0;
    }
    int64_t correlation = 1000 + seq + (peer ? 100 : 0);
    row.launch_correlation_id = correlation;
    row.api_start_ns = clock_ + at;
    row.api_end_ns = clock_ + at + host_ns;
    if (library_ == CommLibrary::Mpi) {
      row.stream = row.device = std::nullopt;
      row.launch_correlation_id = std::nullopt;
      builder_.add(row);
      return;
    }
    row.gpu_start_ns = clock_ + at + 5;
    row.gpu_end_ns = clock_ + at + 9;
    builder_.add(row);
    std::vector<std::pair<int64_t, AccessKind>> args;
    for (std::optional<int64_t> buffer : {send, recv}) {
      if (buffer) args.emplace_back(*buffer, AccessKind::ReadWrite);
    }
    kernel("ncclDevKernel_" + std::string(to_string(kind)), args, at + 1, correlation);
  }

 private:
  int64_t address_of(int64_t alloc_id) {
    Statement address = builder_.db().prepare("SELECT address FROM allocations WHERE id = ?");
    address.bind(1, alloc_id);
    EXPECT_TRUE(address.step());
    return address.int64(0);
  }

  testing::TraceBuilder builder_;
  int64_t rank_;
  int64_t clock_;
  CommLibrary library_;
  int64_t communicator_ = 0;
};

class Collectives : public ::testing::Test {
 protected:
  void SetUp() override {
    for (int rank = 0; rank < 2; ++rank) {
      ranks_.push_back(scratch_ / ("rank" + std::to_string(rank) + ".db"));
    }
    merged_ = scratch_ / "merged.db";
  }

  // Rank r's trace; rank 1's clock starts 10 us later.
  RankTrace rank(int64_t r, CommLibrary library = CommLibrary::Nccl) {
    return RankTrace(ranks_[r], r, r * 10'000, library);
  }

  Graph merged_graph() {
    Progress quiet("test");
    merge_traces(ranks_, merged_, false, quiet);
    trace::Trace merged(merged_, TraceAccess::ReadOnly);
    return build_graph_from_trace(merged);
  }

  static std::vector<uint32_t> ops_of(const Graph& graph, OpKind kind) {
    std::vector<uint32_t> found;
    for (uint32_t op = 0; op < graph.ops.size(); ++op) {
      if (graph.ops[op].kind == kind) found.push_back(op);
    }
    return found;
  }

  static uint32_t kernel_op(const Graph& graph, const std::string& name) {
    for (uint32_t op = 0; op < graph.ops.size(); ++op) {
      if (graph.ops[op].kind == OpKind::Kernel && op_name(graph, op) == name) return op;
    }
    ADD_FAILURE() << "no kernel " << name;
    return 0;
  }

  // The first value `op` read.
  static uint32_t first_read(const Graph& graph, uint32_t op) {
    EXPECT_LT(graph.op_reads_begin[op], graph.op_reads_begin[op + 1]);
    return graph.op_reads[graph.op_reads_begin[op]];
  }

  // Names of the kernels `value` transitively came from (what `dvdg --why` walks).
  static std::set<std::string> producing_kernels(const Graph& graph, uint32_t value) {
    std::set<std::string> kernels;
    std::set<uint32_t> seen = {value};
    std::vector<uint32_t> pending = {value};
    while (!pending.empty()) {
      uint32_t current = pending.back();
      pending.pop_back();
      uint32_t producer = graph.values[current].producer_op;
      if (producer == Value::kNoOp) continue;
      if (graph.ops[producer].kind == OpKind::Kernel) kernels.insert(op_name(graph, producer));
      for (const Edge& edge : edges_of(graph, producer)) {
        if (edge.dst_value == current && seen.insert(edge.src_value).second)
          pending.push_back(edge.src_value);
      }
    }
    return kernels;
  }

  // The collective's edges: (into the exchanged value, out of it).
  static std::pair<int, int> exchange_edges(const Graph& graph, uint32_t op) {
    int in = 0, out = 0;
    for (const Edge& edge : edges_of(graph, op)) {
      in += graph.locations[graph.values[edge.dst_value].location].exchanged;
      out += graph.locations[graph.values[edge.src_value].location].exchanged;
    }
    return {in, out};
  }

  // The processes whose memory an op's edges read from (or wrote to).
  static std::set<uint16_t> processes(const Graph& graph, uint32_t op, bool written) {
    std::set<uint16_t> found;
    for (const Edge& edge : edges_of(graph, op)) {
      const Location& where =
          graph.locations[graph.values[written ? edge.dst_value : edge.src_value].location];
      if (!where.exchanged) found.insert(where.process);
    }
    return found;
  }

  testing::ScratchDir scratch_;
  std::vector<std::string> ranks_;
  std::string merged_;
};

// backward writes grad; an all-reduce (in place, or into out); optimizer
// reads the result into param.
void train_step(RankTrace& trace, int64_t rank, bool in_place) {
  int64_t grad = trace.buffer(kGrad);
  int64_t out = trace.buffer(kOut);
  int64_t param = trace.buffer(kParam);
  std::string suffix = "_rank" + std::to_string(rank);
  trace.kernel("backward" + suffix, {{grad, AccessKind::Write}}, 100);
  int64_t result = in_place ? grad : out;
  trace.call(CollectiveKind::AllReduce, grad, result, 0, 200);
  trace.kernel("optimizer" + suffix, {{result, AccessKind::Read}, {param, AccessKind::ReadWrite}},
               300);
}

TEST_F(Collectives, InPlaceAllReduceIsOneOpReadingAndWritingEveryRank) {
  for (int64_t r = 0; r < 2; ++r) {
    RankTrace trace = rank(r);
    train_step(trace, r, /*in_place=*/true);
  }
  Graph graph = merged_graph();
  std::vector<uint32_t> collectives = ops_of(graph, OpKind::Collective);
  ASSERT_EQ(collectives.size(), 1u);
  uint32_t op = collectives[0];
  EXPECT_EQ(graph.ops[op].collective_kind, CollectiveKind::AllReduce);
  EXPECT_EQ(graph.ops[op].ranks_missing, 0);
  EXPECT_EQ(graph.ops[op].bytes, 2 * kBytes) << "each receive buffer once";
  EXPECT_EQ(edges_of(graph, op).size(), 4u);
  EXPECT_EQ(exchange_edges(graph, op), std::make_pair(2, 2));
  EXPECT_EQ(processes(graph, op, false), (std::set<uint16_t>{1, 2}));
  EXPECT_EQ(processes(graph, op, true), (std::set<uint16_t>{1, 2}));
  EXPECT_EQ(op_name(graph, op), "AllReduce");

  uint32_t input = first_read(graph, kernel_op(graph, "optimizer_rank0"));
  EXPECT_EQ(graph.values[input].producer_op, op);
  EXPECT_EQ(producing_kernels(graph, input),
            (std::set<std::string>{"backward_rank0", "backward_rank1"}));
  std::ostringstream why;
  print_why(graph, input, why);
  EXPECT_NE(why.str().find("AllReduce"), std::string::npos) << why.str();
  EXPECT_NE(why.str().find("backward_rank1"), std::string::npos) << why.str();

  // The NCCL kernels stay, joined to the collective, without edges of their own.
  for (const char* name : {"ncclDevKernel_AllReduce"}) {
    size_t joined = 0;
    for (uint32_t k = 0; k < graph.ops.size(); ++k) {
      if (graph.ops[k].kind != OpKind::Kernel || op_name(graph, k) != name) continue;
      EXPECT_EQ(graph.ops[k].runs_collective, op);
      EXPECT_TRUE(edges_of(graph, k).empty());
      ++joined;
    }
    EXPECT_EQ(joined, 2u);
  }
}

TEST_F(Collectives, OutOfPlaceAllReduceWritesEveryRanksReceiveBuffer) {
  for (int64_t r = 0; r < 2; ++r) {
    RankTrace trace = rank(r);
    train_step(trace, r, /*in_place=*/false);
  }
  Graph graph = merged_graph();
  std::vector<uint32_t> collectives = ops_of(graph, OpKind::Collective);
  ASSERT_EQ(collectives.size(), 1u);
  EXPECT_EQ(exchange_edges(graph, collectives[0]), std::make_pair(2, 2));
  for (const char* optimizer : {"optimizer_rank0", "optimizer_rank1"}) {
    uint32_t input = first_read(graph, kernel_op(graph, optimizer));
    EXPECT_EQ(graph.values[input].producer_op, collectives[0]);
    EXPECT_EQ(producing_kernels(graph, input),
              (std::set<std::string>{"backward_rank0", "backward_rank1"}))
        << optimizer;
  }
}

TEST_F(Collectives, SendAndItsReceiveAreOneMessageFromSenderToReceiver) {
  for (int64_t r = 0; r < 2; ++r) {
    RankTrace trace = rank(r);
    int64_t buf = trace.buffer(kGrad);
    std::string suffix = "_rank" + std::to_string(r);
    if (r == 0) {
      trace.kernel("produce" + suffix, {{buf, AccessKind::Write}}, 100);
      trace.call(CollectiveKind::Send, buf, std::nullopt, 0, 200, 1);
    } else {
      trace.call(CollectiveKind::Recv, std::nullopt, buf, 0, 200, 0);
      trace.kernel("consume" + suffix, {{buf, AccessKind::Read}, {trace.buffer(kOut), AccessKind::Write}},
                   300);
    }
  }
  Graph graph = merged_graph();
  std::vector<uint32_t> messages = ops_of(graph, OpKind::Message);
  ASSERT_EQ(messages.size(), 1u);
  uint32_t op = messages[0];
  EXPECT_EQ(op_name(graph, op), "Send/Recv");
  ASSERT_EQ(edges_of(graph, op).size(), 1u);
  const Edge edge = edges_of(graph, op)[0];
  EXPECT_EQ(graph.locations[graph.values[edge.src_value].location].process, 1);
  EXPECT_EQ(graph.locations[graph.values[edge.dst_value].location].process, 2);
  EXPECT_EQ(edge.bytes, kBytes);
  uint32_t input = first_read(graph, kernel_op(graph, "consume_rank1"));
  EXPECT_EQ(producing_kernels(graph, input), (std::set<std::string>{"produce_rank0"}));
}

TEST_F(Collectives, BroadcastCarriesTheRootsValueToEveryRank) {
  for (int64_t r = 0; r < 2; ++r) {
    RankTrace trace = rank(r);
    int64_t buf = trace.buffer(kGrad);
    std::string suffix = "_rank" + std::to_string(r);
    trace.kernel("init" + suffix, {{buf, AccessKind::Write}}, 100);
    // Rank 0 is the root: only it sends (in place); every rank receives.
    trace.call(CollectiveKind::Broadcast, r == 0 ? std::optional<int64_t>(buf) : std::nullopt, buf,
               0, 200);
    trace.kernel("use" + suffix, {{buf, AccessKind::Read}, {trace.buffer(kOut), AccessKind::Write}},
                 300);
  }
  Graph graph = merged_graph();
  std::vector<uint32_t> collectives = ops_of(graph, OpKind::Collective);
  ASSERT_EQ(collectives.size(), 1u);
  EXPECT_EQ(exchange_edges(graph, collectives[0]), std::make_pair(1, 2));
  uint32_t input = first_read(graph, kernel_op(graph, "use_rank1"));
  EXPECT_EQ(producing_kernels(graph, input), (std::set<std::string>{"init_rank0"}))
      << "rank 1's own data was overwritten by the root's";
}

TEST_F(Collectives, AllGatherGathersEveryRanksChunk) {
  for (int64_t r = 0; r < 2; ++r) {
    RankTrace trace = rank(r);
    int64_t chunk = trace.buffer(kGrad);
    int64_t all = trace.buffer(kOut);
    std::string suffix = "_rank" + std::to_string(r);
    trace.kernel("shard" + suffix, {{chunk, AccessKind::Write}}, 100);
    trace.call(CollectiveKind::AllGather, chunk, all, 0, 200, std::nullopt, kBytes);
    trace.kernel("use" + suffix, {{all, AccessKind::Read}, {trace.buffer(kParam), AccessKind::Write}},
                 300);
  }
  Graph graph = merged_graph();
  std::vector<uint32_t> collectives = ops_of(graph, OpKind::Collective);
  ASSERT_EQ(collectives.size(), 1u);
  EXPECT_EQ(graph.ops[collectives[0]].collective_kind, CollectiveKind::AllGather);
  EXPECT_EQ(exchange_edges(graph, collectives[0]), std::make_pair(2, 2));
  uint32_t input = first_read(graph, kernel_op(graph, "use_rank0"));
  EXPECT_EQ(producing_kernels(graph, input), (std::set<std::string>{"shard_rank0", "shard_rank1"}));
}

// FSDP's shape: each rank copies its shard into the all-gather's input on
// its compute stream, the communication stream waits for that by an event,
// and the compute stream waits for the gathered output the same way. Rank
// 1's clock runs later, so only the event waits around its call, not time,
// put its copy before the collective and its use after it.
TEST_F(Collectives, AllGatherWaitsForWhatEachRanksStreamWaitedForBeforeItsCall) {
  for (int64_t r = 0; r < 2; ++r) {
    RankTrace trace = rank(r);
    int64_t chunk = trace.buffer(kGrad);
    int64_t all = trace.buffer(kOut);
    std::string suffix = "_rank" + std::to_string(r);
    trace.kernel("copy_in" + suffix, {{chunk, AccessKind::Write}}, 100, 0, kComputeStream);
    trace.event(kComputeStream, kCommStream, 110);
    trace.call(CollectiveKind::AllGather, chunk, all, 0, 200, std::nullopt, kBytes);
    trace.event(kCommStream, kComputeStream, 250);
    trace.kernel("use" + suffix,
                 {{all, AccessKind::Read}, {trace.buffer(kParam), AccessKind::Write}}, 300, 0,
                 kComputeStream);
  }
  Graph graph = merged_graph();
  std::vector<uint32_t> collectives = ops_of(graph, OpKind::Collective);
  ASSERT_EQ(collectives.size(), 1u);
  EXPECT_EQ(exchange_edges(graph, collectives[0]), std::make_pair(2, 2));
  for (const Edge& edge : edges_of(graph, collectives[0]))
    EXPECT_FALSE(edge.uninitialized_read) << "a rank's shard read before its copy";
  for (const char* use : {"use_rank0", "use_rank1"}) {
    uint32_t input = first_read(graph, kernel_op(graph, use));
    EXPECT_EQ(graph.values[input].producer_op, collectives[0]) << use;
    EXPECT_EQ(producing_kernels(graph, input),
              (std::set<std::string>{"copy_in_rank0", "copy_in_rank1"}))
        << use;
  }
}

// A caching allocator hands each rank's buffer out anew before the call:
// which block a rank's buffer is depends on that rank's call, on its own
// clock (rank 1's runs 10 us later: at rank 0's call, rank 1's block was
// not yet handed out).
TEST_F(Collectives, EachRanksBufferIsTheBlockLiveAtItsOwnCall) {
  for (int64_t r = 0; r < 2; ++r) {
    RankTrace trace = rank(r);
    int64_t grad = trace.buffer(kGrad);
    trace.block(grad, 10, 90);
    trace.block(grad, 95, 1000);
    std::string suffix = "_rank" + std::to_string(r);
    trace.kernel("backward" + suffix, {{grad, AccessKind::Write}}, 100);
    trace.call(CollectiveKind::AllReduce, grad, grad, 0, 200);
    trace.kernel("optimizer" + suffix, {{grad, AccessKind::Read}}, 300);
  }
  Graph graph = merged_graph();
  std::vector<uint32_t> collectives = ops_of(graph, OpKind::Collective);
  ASSERT_EQ(collectives.size(), 1u);
  for (const Edge& edge : edges_of(graph, collectives[0]))
    EXPECT_FALSE(edge.uninitialized_read) << "a rank's buffer resolved at another rank's time";
  EXPECT_EQ(producing_kernels(graph, first_read(graph, kernel_op(graph, "optimizer_rank1"))),
            (std::set<std::string>{"backward_rank0", "backward_rank1"}));
}

// One rank's trace, unmerged: the collective reads and writes what this rank
// has and says the other rank is not in the trace; a send without its
// receiver likewise.
TEST_F(Collectives, SingleRankTraceSaysThePeerIsNotInTheTrace) {
  {
    RankTrace trace = rank(0);
    train_step(trace, 0, /*in_place=*/true);
    int64_t message = trace.buffer(0x7f0000030000);
    trace.call(CollectiveKind::Send, message, std::nullopt, 0, 400, 1);
  }
  trace::Trace single(ranks_[0], TraceAccess::ReadWrite);
  Database& db = single.db();
  Graph graph = build_graph_from_trace(single);
  std::vector<uint32_t> collectives = ops_of(graph, OpKind::Collective);
  ASSERT_EQ(collectives.size(), 1u);
  uint32_t op = collectives[0];
  EXPECT_EQ(graph.ops[op].ranks_missing, 1);
  EXPECT_EQ(op_name(graph, op), "AllReduce (1 rank not in the trace)");
  EXPECT_EQ(exchange_edges(graph, op), std::make_pair(1, 1));
  uint32_t input = first_read(graph, kernel_op(graph, "optimizer_rank0"));
  EXPECT_EQ(producing_kernels(graph, input), (std::set<std::string>{"backward_rank0"}));
  std::vector<uint32_t> messages = ops_of(graph, OpKind::Message);
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_EQ(op_name(graph, messages[0]), "Send (receiver not in the trace)");

  // Stored: the collective's kind, the missing rank, the NCCL kernel's link
  // and the exchanged value.
  store_graph(db, graph);
  Statement ops = db.prepare(
      "SELECT o.kind, e.name, o.ranks_missing, o.bytes FROM dvdg_ops o JOIN enum_values e"
      " ON e.enum = 'collective_kind' AND e.value = o.collective_kind ORDER BY o.id");
  ASSERT_TRUE(ops.step());
  EXPECT_EQ(ops.text(0), "collective");
  EXPECT_EQ(ops.text(1), "AllReduce");
  EXPECT_EQ(ops.int64(2), 1);
  EXPECT_EQ(ops.int64(3), kBytes);
  ASSERT_TRUE(ops.step());
  EXPECT_EQ(ops.text(0), "message");
  EXPECT_EQ(ops.text(1), "Send");
  Statement linked = db.prepare(
      "SELECT count(*) FROM dvdg_ops k JOIN dvdg_ops c ON c.id = k.collective_op_id"
      " WHERE k.kind = 'kernel' AND c.kind IN ('collective', 'message')");
  ASSERT_TRUE(linked.step());
  EXPECT_EQ(linked.int64(0), 2);
  Statement exchanged = db.prepare(
      "SELECT count(*) FROM dvdg_values v JOIN dvdg_ops o ON o.id = v.producer_op_id"
      " WHERE v.exchanged = 1 AND o.kind = 'collective'");
  ASSERT_TRUE(exchanged.step());
  EXPECT_EQ(exchanged.int64(0), 1);
}

// One rank of an MPI job that moves GPU data through host memory (mpi4py's
// way): a kernel's result on the GPU, host buffers for MPI, and the GPU
// buffer what it received is copied back to.
struct HostStagedRank {
  HostStagedRank(RankTrace& trace, int64_t rank)
      : trace(trace),
        suffix("_rank" + std::to_string(rank)),
        gpu(trace.buffer(kGrad)),
        staged(trace.buffer(0x10000, AllocKind::PageableHost)),
        sum(trace.buffer(0x20000, AllocKind::PageableHost)),
        received(trace.buffer(0x30000, AllocKind::PageableHost)),
        back(trace.buffer(kOut)) {
    trace.kernel("produce" + suffix, {{gpu, AccessKind::Write}}, 100);
  }
  // What the rank received, copied back to the GPU and used there.
  void consume_received(int64_t at) {
    trace.copy(CopyKind::HtoD, received, back, at);
    trace.kernel("consume" + suffix, {{back, AccessKind::Read}, {trace.buffer(kParam), AccessKind::Write}},
                 at + 100);
  }

  RankTrace& trace;
  std::string suffix;
  int64_t gpu, staged, sum, received, back;
};

// Each rank copies its result to the host, all-reduces it, swaps the sum
// with its peer in one MPI_Sendrecv (a send and a receive entered at the
// same instant) and copies what it received back to the GPU. The calls run
// on the host, so no stream orders them: each rank's call does.
TEST_F(Collectives, MpiExchangeThroughHostMemoryJoinsBothRanks) {
  for (int64_t r = 0; r < 2; ++r) {
    RankTrace trace = rank(r, CommLibrary::Mpi);
    HostStagedRank job(trace, r);
    trace.copy(CopyKind::DtoH, job.gpu, job.staged, 200);
    trace.call(CollectiveKind::AllReduce, job.staged, job.sum, 0, 300, std::nullopt, kBytes, 50);
    trace.call(CollectiveKind::Send, job.sum, std::nullopt, 0, 400, 1 - r, kBytes, 50);
    trace.call(CollectiveKind::Recv, std::nullopt, job.received, 0, 400, 1 - r, kBytes, 50);
    job.consume_received(500);
  }
  Graph graph = merged_graph();
  EXPECT_EQ(graph.broken_order_constraints, 0u);
  EXPECT_EQ(ops_of(graph, OpKind::Collective).size(), 1u);
  std::vector<uint32_t> messages = ops_of(graph, OpKind::Message);
  ASSERT_EQ(messages.size(), 2u);
  for (uint32_t message : messages) {
    ASSERT_EQ(edges_of(graph, message).size(), 1u);
    const Edge edge = edges_of(graph, message)[0];
    EXPECT_NE(graph.locations[graph.values[edge.src_value].location].process,
              graph.locations[graph.values[edge.dst_value].location].process);
    EXPECT_NE(graph.values[edge.src_value].producer_op, Value::kNoOp)
        << "the message sends the all-reduced sum, not the buffer's older content";
  }
  for (const std::string& consumer : {"consume_rank0", "consume_rank1"}) {
    uint32_t input = first_read(graph, kernel_op(graph, consumer));
    EXPECT_EQ(producing_kernels(graph, input),
              (std::set<std::string>{"produce_rank0", "produce_rank1"}))
        << consumer << " reads what the peer received, made of both ranks' results";
  }
}

// The same exchange with the receive posted after the send returned (an
// eager send) and a copy between them: each rank's send comes before its
// receive, so a message ordered before its sender's later work would wait
// for the other one.
TEST_F(Collectives, MpiEagerSendsInBothDirectionsLeaveNoCycle) {
  for (int64_t r = 0; r < 2; ++r) {
    RankTrace trace = rank(r, CommLibrary::Mpi);
    HostStagedRank job(trace, r);
    trace.copy(CopyKind::DtoH, job.gpu, job.sum, 200);
    trace.call(CollectiveKind::Send, job.sum, std::nullopt, 0, 300, 1 - r, kBytes, 5);
    trace.copy(CopyKind::DtoH, job.gpu, job.staged, 400);
    trace.call(CollectiveKind::Recv, std::nullopt, job.received, 0, 500, 1 - r, kBytes, 50);
    job.consume_received(600);
  }
  Graph graph = merged_graph();
  EXPECT_EQ(graph.broken_order_constraints, 0u);
  EXPECT_EQ(ops_of(graph, OpKind::Message).size(), 2u);
  EXPECT_EQ(producing_kernels(graph, first_read(graph, kernel_op(graph, "consume_rank0"))),
            (std::set<std::string>{"produce_rank1"}));
  EXPECT_EQ(producing_kernels(graph, first_read(graph, kernel_op(graph, "consume_rank1"))),
            (std::set<std::string>{"produce_rank0"}));
}

// Clocks aligned badly enough that each rank received before the other
// sent: the ranks' constraints wait for each other. The graph still holds
// every op, and says how many constraints it broke.
TEST_F(Collectives, ContradictoryRankClocksBreakAConstraintInsteadOfFailing) {
  for (int64_t r = 0; r < 2; ++r) {
    RankTrace trace = rank(r, CommLibrary::Mpi);
    HostStagedRank job(trace, r);
    trace.call(CollectiveKind::Recv, std::nullopt, job.received, 0, 150, 1 - r, kBytes, 10);
    trace.copy(CopyKind::DtoH, job.gpu, job.sum, 200);
    trace.call(CollectiveKind::Send, job.sum, std::nullopt, 0, 250, 1 - r, kBytes, 10);
  }
  Graph graph = merged_graph();
  EXPECT_GT(graph.broken_order_constraints, 0u);
  EXPECT_EQ(ops_of(graph, OpKind::Message).size(), 2u);
  EXPECT_EQ(ops_of(graph, OpKind::Copy).size(), 2u);
}

}  // namespace
}  // namespace apptracer::dvdg
