// NCCL / MPI operations across ranks: `merge` joins the ranks' collectives
// rows into operations (collective_matches), `stats --report collectives`
// sums them with nccl-tests' bandwidths. Traces are synthetic, one per rank.
#include <gtest/gtest.h>
#include <unistd.h>

#include "apptracer/enums.h"
#include "analyzer/merge/merge.h"
#include "report_test_helpers.h"
#include "scratch_dir.h"
#include "analyzer/query/sql_query.h"
#include "analyzer/stats/stats_reports.h"
#include "trace_builder.h"
#include "analyzer/trace/trace_file.h"

namespace apptracer::testing {
namespace {

constexpr int64_t kWorld = 0x5eed;

class RankTrace {
 public:
  RankTrace(const std::string& path, int64_t rank) : builder_(path), rank_(rank) {
    builder_.set_meta("pid", std::to_string(100 + rank));
  }
  void set_clock_offset(int64_t ns) { builder_.set_meta("clock_offset_ns", std::to_string(ns)); }
  int64_t communicator(int64_t comm_id, int64_t nranks) {
    apptracer::CommunicatorRow row;
    row.library = CommLibrary::Nccl;
    row.comm_id = comm_id;
    row.rank = rank_;
    row.nranks = nranks;
    return builder_.add(row);
  }
  void operation(int64_t communicator_id, CollectiveKind kind, int64_t count, int64_t seq,
                 std::optional<int64_t> peer = std::nullopt, int64_t gpu_ns = 1000) {
    apptracer::CollectiveRow row;
    row.communicator_id = communicator_id;
    row.kind = kind;
    row.datatype = DataType::Float32;
    row.element_bytes = 4;
    row.count = count;
    row.seq = seq;
    row.peer = peer;
    row.tid = 1;
    row.gpu_start_ns = 10'000 * (seq + 1);
    row.gpu_end_ns = *row.gpu_start_ns + gpu_ns;
    row.algorithm = CollAlgorithm::Ring;
    row.protocol = CollProtocol::Simple;
    builder_.add(row);
  }

 private:
  TraceBuilder builder_;
  int64_t rank_;
};

class Collectives : public ::testing::Test {
 protected:
  void SetUp() override {
    for (int rank = 0; rank < 2; ++rank) {
      ranks_.push_back(scratch_ / ("rank" + std::to_string(rank) + ".db"));
    }
    out_ = scratch_ / "all.db";
  }
  void merge() {
    Progress quiet("test");
    merge_traces(ranks_, out_, false, quiet);
  }
  Table query(const std::string& sql) {
    Database db = open_trace(out_, TraceAccess::ReadOnly);
    return run_read_only_query(db, sql);
  }

  ScratchDir scratch_;
  std::vector<std::string> ranks_;
  std::string out_;
};

TEST_F(Collectives, MergeJoinsEachOperationsRowsOfEveryRankOnce) {
  for (int64_t rank = 0; rank < 2; ++rank) {
    RankTrace trace(ranks_[rank], rank);
    int64_t world = trace.communicator(kWorld, 2);
    // A communicator of this rank alone (its own comm_id): never joined.
    int64_t own = trace.communicator(0x1000 + rank, 1);
    trace.operation(world, CollectiveKind::AllReduce, 1024, 0);
    trace.operation(world, CollectiveKind::AllReduce, 1024, 1);
    trace.operation(own, CollectiveKind::AllReduce, 1024, 0);
    // Rank 0 sends twice to rank 1, which received only the first.
    if (rank == 0) {
      trace.operation(world, CollectiveKind::Send, 64, 0, 1);
      trace.operation(world, CollectiveKind::Send, 64, 1, 1);
    } else {
      trace.operation(world, CollectiveKind::Recv, 64, 0, 0);
    }
  }
  merge();
  Table matches = query(
      "SELECT x.match_id, count(*) AS rows, count(DISTINCT c.process_id) AS processes,"
      " min(c.kind) AS kind, min(c.seq) AS seq FROM collective_matches x"
      " JOIN collectives c ON c.id = x.collective_id GROUP BY x.match_id ORDER BY kind, seq");
  ASSERT_EQ(matches.rows.size(), 3u) << "two all-reduces and one message";
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(integer(matches, i, "rows"), 2);
    EXPECT_EQ(integer(matches, i, "processes"), 2);
  }
  EXPECT_EQ(integer(matches, 0, "kind"), static_cast<int>(CollectiveKind::AllReduce));
  EXPECT_EQ(integer(matches, 1, "seq"), 1);
  EXPECT_EQ(integer(matches, 2, "kind"), static_cast<int>(CollectiveKind::Send));
  EXPECT_EQ(integer(matches, 2, "seq"), 0);
  Table message = query(
      "SELECT group_concat(e, ',') AS ends FROM (SELECT c.kind || ':' || p.pid AS e"
      " FROM collective_matches x JOIN collectives c ON c.id = x.collective_id JOIN processes p"
      " ON p.process_id = c.process_id WHERE c.kind IN (20, 21) ORDER BY c.kind)");
  EXPECT_EQ(text(message, 0, "ends"), "20:100,21:101");
}

TEST_F(Collectives, RowsOfOneRankOrOfDifferentKindsAreNoOperation) {
  for (int64_t rank = 0; rank < 2; ++rank) {
    RankTrace trace(ranks_[rank], rank);
    int64_t world = trace.communicator(kWorld, 2);
    trace.operation(world, rank == 0 ? CollectiveKind::AllReduce : CollectiveKind::Broadcast, 8, 0);
  }
  merge();
  EXPECT_TRUE(query("SELECT * FROM collective_matches").rows.empty());
}

TEST_F(Collectives, MergePutsEachRankOnTheClockOffsetItsTracerMeasured) {
  for (int64_t rank = 0; rank < 2; ++rank) {
    RankTrace trace(ranks_[rank], rank);
    if (rank == 1) trace.set_clock_offset(-2500);
    trace.operation(trace.communicator(kWorld, 2), CollectiveKind::AllReduce, 8, 0);
  }
  merge();
  Table rows = query(
      "SELECT c.gpu_start_ns AS start, o.offset AS offset FROM collectives c JOIN merge_offsets o"
      " ON o.process_id = c.process_id AND o.id_space = 'time_ns' ORDER BY c.process_id");
  ASSERT_EQ(rows.rows.size(), 2u);
  EXPECT_EQ(integer(rows, 0, "start"), 10'000);
  EXPECT_EQ(integer(rows, 0, "offset"), 0);
  EXPECT_EQ(integer(rows, 1, "start"), 7'500);
  EXPECT_EQ(integer(rows, 1, "offset"), -2500);
}

TEST_F(Collectives, StatsReportNcclTestsBandwidths) {
  {
    RankTrace trace(ranks_[0], 0);
    int64_t comm = trace.communicator(kWorld, 4);
    // AllGather of 256 floats per rank over 4 ranks: S = 4096 bytes;
    // 1024 ns -> algbw 4 GB/s, busbw x (n-1)/n = 3 GB/s.
    trace.operation(comm, CollectiveKind::AllGather, 256, 0, std::nullopt, 1024);
    trace.operation(comm, CollectiveKind::AllGather, 256, 1, std::nullopt, 1024);
    // AllReduce of 1024 floats: S = 4096; 2048 ns -> algbw 2, busbw x 2(n-1)/n = 3.
    trace.operation(comm, CollectiveKind::AllReduce, 1024, 0, std::nullopt, 2048);
  }
  Database db = open_trace(ranks_[0], TraceAccess::ReadOnly);
  Table table = run_report(collectives_report, db);
  ASSERT_EQ(table.rows.size(), 2u);
  EXPECT_EQ(text(table, 0, "kind"), "AllReduce");
  EXPECT_EQ(integer(table, 0, "bytes"), 4096);
  EXPECT_EQ(integer(table, 0, "count"), 1);
  EXPECT_DOUBLE_EQ(real(table, 0, "algbw_gbps"), 2.0);
  EXPECT_DOUBLE_EQ(real(table, 0, "busbw_gbps"), 3.0);
  EXPECT_EQ(text(table, 1, "kind"), "AllGather");
  EXPECT_EQ(text(table, 1, "library"), "NCCL");
  EXPECT_EQ(text(table, 1, "algorithm"), "RING/SIMPLE");
  EXPECT_EQ(integer(table, 1, "nranks"), 4);
  EXPECT_EQ(integer(table, 1, "bytes"), 4096);
  EXPECT_EQ(integer(table, 1, "count"), 2);
  EXPECT_EQ(integer(table, 1, "total_ns"), 2048);
  EXPECT_DOUBLE_EQ(real(table, 1, "algbw_gbps"), 4.0);
  EXPECT_DOUBLE_EQ(real(table, 1, "busbw_gbps"), 3.0);
}

}  // namespace
}  // namespace apptracer::testing
