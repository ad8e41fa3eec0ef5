// Cross-rank stragglers on a fabricated 2-rank job, merged as `apptracer
// merge` merges: eight steps (NVTX ranges "step" on rank 0, "step 1",
// "step 2", ... on rank 1), each a forward kernel then an all-gather. In step 5 rank 1's host pauses 20 ms before the all-gather; in
// step 3 its forward kernel runs 10 ms longer; in step 7 its host is blocked
// 5 ms in a synchronization. The analysis names the rank, the step, the
// collective and what held it, priced at the others' wait.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "analyzer/ranks/stragglers.h"
#include "command_runner.h"
#include "analyzer/merge/merge.h"
#include "report_test_helpers.h"
#include "scratch_dir.h"
#include "analyzer/stats/stats_reports.h"
#include "trace_builder.h"

namespace apptracer {
namespace {

using testing::ScratchDir;

constexpr int64_t kWorld = 0x5eed;
constexpr int64_t kSteps = 8;
constexpr int64_t kStepNs = 50'000'000;
constexpr int64_t kForwardNs = 500'000;
constexpr int64_t kHostGapNs = 20'000'000;
constexpr int64_t kSlowKernelNs = 10'000'000;
constexpr int64_t kSyncNs = 5'000'000;
constexpr int64_t kAllGatherNs = 100'000;

// Where a rank is held back: the steps of each anomaly (0: none).
struct Anomalies {
  int64_t host_gap_step = 0;
  int64_t slow_kernel_step = 0;
  int64_t sync_step = 0;
};

// Rank `rank`'s trace: per step a forward kernel launched at +10 us, then an
// all-gather called at +600 us (later by the host gap or synchronization of
// its anomalies) whose NCCL kernel starts when the stream is free and ends
// kAllGatherNs after the last rank arrives (`last_arrival`: the job's, per step).
void write_rank(const std::string& path, int64_t rank, const Anomalies& anomalies,
                const std::vector<int64_t>& last_arrival) {
  testing::TraceBuilder trace(path);
  trace.set_meta("pid", std::to_string(100 + rank));
  testing::DeviceRow device;
  device.uuid = "GPU-" + std::to_string(rank);
  trace.add_device(device);
  CommunicatorRow comm;
  comm.library = CommLibrary::Nccl;
  comm.comm_id = kWorld;
  comm.rank = rank;
  comm.nranks = 2;
  int64_t communicator = trace.add(comm);
  int64_t correlation = 0;
  for (int64_t step = 1; step <= kSteps; ++step) {
    int64_t start = step * kStepNs;
    int64_t issue = start + 600'000 + (step == anomalies.host_gap_step ? kHostGapNs : 0) +
                    (step == anomalies.sync_step ? kSyncNs : 0);
    testing::KernelRow forward;
    forward.mangled_name = "_Z7forwardv";
    forward.demangled_name = "forward()";
    forward.stream = 7;
    forward.call_correlation_id = ++correlation;
    forward.api_start_ns = start + 10'000;
    forward.gpu_start_ns = start + 20'000;
    forward.gpu_end_ns = *forward.gpu_start_ns + kForwardNs + (step == anomalies.slow_kernel_step ? kSlowKernelNs : 0);
    trace.add(forward);
    testing::ApiCallRow launch;
    launch.name = "cudaLaunchKernel";
    launch.correlation_id = correlation;
    launch.start_ns = start + 10'000;
    launch.end_ns = start + 15'000;
    trace.add(launch);
    if (step == anomalies.sync_step) {
      testing::ApiCallRow wait;
      wait.name = "cudaDeviceSynchronize";
      wait.correlation_id = ++correlation;
      wait.start_ns = issue - kSyncNs;
      wait.end_ns = issue - 1'000;
      trace.add(wait);
      testing::SyncRow sync;
      sync.call_correlation_id = correlation;
      sync.start_ns = wait.start_ns;
      sync.end_ns = wait.end_ns;
      trace.add(sync);
    }

    CollectiveRow all_gather;
    all_gather.communicator_id = communicator;
    all_gather.kind = CollectiveKind::AllGather;
    all_gather.datatype = DataType::Float32;
    all_gather.element_bytes = 4;
    all_gather.count = 1 << 20;
    all_gather.seq = step;
    all_gather.tid = 1;
    all_gather.stream = 7;
    all_gather.device = 0;
    all_gather.launch_correlation_id = ++correlation;
    all_gather.api_start_ns = issue;
    all_gather.api_end_ns = issue + 10'000;
    all_gather.gpu_start_ns = std::max(issue + 5'000, *forward.gpu_end_ns);
    all_gather.gpu_end_ns = last_arrival[step] + kAllGatherNs;
    trace.add(all_gather);
    testing::KernelRow nccl;
    nccl.mangled_name = "_Z20ncclDevKernel_AllGatherv";
    nccl.demangled_name = "ncclDevKernel_AllGather()";
    nccl.stream = 7;
    nccl.call_correlation_id = correlation;
    nccl.api_start_ns = issue + 1'000;
    nccl.gpu_start_ns = all_gather.gpu_start_ns;
    nccl.gpu_end_ns = all_gather.gpu_end_ns;
    trace.add(nccl);

    testing::NvtxRangeRow range;
    range.name = rank == 0 ? "step" : "step " + std::to_string(step);
    range.start_ns = start;
    range.end_ns = issue + 20'000;
    trace.add(range);
  }
}

class Stragglers : public ::testing::Test {
 protected:
  Stragglers() {
    // When each step's all-gather could start on the late rank: its arrival.
    std::vector<int64_t> last_arrival(kSteps + 1);
    for (int64_t step = 1; step <= kSteps; ++step) {
      int64_t start = step * kStepNs;
      last_arrival[step] = start + 605'000;
      if (step == 5) last_arrival[step] += kHostGapNs;
      if (step == 7) last_arrival[step] += kSyncNs;
      if (step == 3) last_arrival[step] = start + 20'000 + kForwardNs + kSlowKernelNs;
    }
    std::vector<std::string> ranks{dir / "rank0.db", dir / "rank1.db"};
    write_rank(ranks[0], 0, {}, last_arrival);
    write_rank(ranks[1], 1, {5, 3, 7}, last_arrival);
    Progress quiet("test");
    merge_traces(ranks, dir / "job.db", false, quiet);
  }

  ScratchDir dir;
};

TEST_F(Stragglers, NameTheLateRankStepCollectiveAndTheHostGapThatHeldIt) {
  Database db = open_trace(dir / "job.db", TraceAccess::ReadOnly);
  trace::Trace job(db);
  ranks::Stragglers found = ranks::find_stragglers(job, 100'000);
  EXPECT_EQ(found.joined, kSteps);
  ASSERT_EQ(found.late.size(), 3u);

  const ranks::Straggler& gap = found.late[0];
  EXPECT_EQ(gap.kind, CollectiveKind::AllGather);
  EXPECT_EQ(gap.late_rank, 1);
  EXPECT_EQ(gap.late_process, 2);
  EXPECT_EQ(gap.step_range, "step");
  EXPECT_EQ(gap.step, 5);
  EXPECT_EQ(gap.seq, 5);
  EXPECT_EQ(gap.held_by, "host gap");
  EXPECT_EQ(gap.cause, "");
  EXPECT_NEAR(gap.wait_ns, kHostGapNs, kHostGapNs / 5);
  EXPECT_NEAR(gap.late_by_ns, kHostGapNs, kHostGapNs / 5);
  EXPECT_NEAR(gap.cause_ns, kHostGapNs, kHostGapNs / 5);

  const ranks::Straggler& slow = found.late[1];
  EXPECT_EQ(slow.late_rank, 1);
  EXPECT_EQ(slow.step, 3);
  EXPECT_EQ(slow.held_by, "kernel");
  EXPECT_EQ(slow.cause, "forward()");
  EXPECT_NEAR(slow.wait_ns, kSlowKernelNs, kSlowKernelNs / 5);

  const ranks::Straggler& blocked = found.late[2];
  EXPECT_EQ(blocked.step, 7);
  EXPECT_EQ(blocked.held_by, "synchronization");
  EXPECT_EQ(blocked.cause, "cudaDeviceSynchronize");
  EXPECT_NEAR(blocked.cause_ns, kSyncNs, kSyncNs / 5);
  EXPECT_NEAR(blocked.wait_ns, kSyncNs, kSyncNs / 5);
}

TEST_F(Stragglers, StatsReportListsThemMostCostlyFirst) {
  Database db = open_trace(dir / "job.db", TraceAccess::ReadOnly);
  ReportOutput output = testing::run_report(stragglers_report, db);
  ASSERT_EQ(output.tables.size(), 1u) << output.note;
  const Table& table = output.tables[0];
  ASSERT_EQ(table.rows.size(), 3u);
  EXPECT_EQ(testing::text(table, 0, "collective"), "AllGather");
  EXPECT_EQ(testing::integer(table, 0, "late_rank"), 1);
  EXPECT_EQ(testing::integer(table, 0, "step"), 5);
  EXPECT_EQ(testing::text(table, 0, "held_by"), "host gap");
  EXPECT_EQ(testing::text(table, 1, "held_by"), "kernel");
}

TEST_F(Stragglers, DiagnoseFindsThemWithTheirCostToTheJob) {
  auto result = dvdg::run_apptracer("diagnose " + dir / "job.db" + " --json");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  nlohmann::json diagnosis = nlohmann::json::parse(result.out);
  std::vector<nlohmann::json> found;
  for (const nlohmann::json& finding : diagnosis["findings"]) {
    if (finding["rule"] == "collective_straggler") found.push_back(finding);
  }
  ASSERT_EQ(found.size(), 3u) << result.out;
  const nlohmann::json& gap = found[0];
  std::string what = gap["what"];
  EXPECT_EQ(what.rfind("rank 1 arrived 20.00 ms late at AllGather (seq 5), step 5; held by host gap", 0),
            0u) << what;
  EXPECT_NEAR(gap["cost_ns"].get<double>(), kHostGapNs, kHostGapNs / 5);
  EXPECT_NEAR(gap["saving_ns"].get<double>(), kHostGapNs, kHostGapNs / 5);
}

TEST(StragglersReport, ASingleRanksTraceSaysToMergeFirst) {
  ScratchDir dir;
  write_rank(dir / "rank0.db", 0, {}, std::vector<int64_t>(kSteps + 1, 0));
  Database db = open_trace(dir / "rank0.db", TraceAccess::ReadOnly);
  ReportOutput output = testing::run_report(stragglers_report, db);
  EXPECT_TRUE(output.tables.empty());
  EXPECT_NE(output.note.find("apptracer merge"), std::string::npos) << output.note;
}

}  // namespace
}  // namespace apptracer
