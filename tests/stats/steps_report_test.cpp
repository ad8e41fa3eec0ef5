// `stats --report steps`, and --steps / --steady on stats, diagnose and timeline, on
// fabricated traces and on the bundled PyTorch example.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "analyzer/stats/stats_reports.h"
#include "command_runner.h"
#include "report_test_helpers.h"
#include "scratch_dir.h"
#include "trace_builder.h"

namespace apptracer::testing {
namespace {

// A kernel issued at 1 us, run 2-3 us; then steps 1-3, range k at
// [10k us, 10k us + 5 us), each issuing at +100 ns a kernel run +1..+3 us and
// at +200 ns a copy run +2..+4 us (3 us of GPU busy together).
void build_three_steps(TraceBuilder& builder) {
  KernelRow setup;
  setup.demangled_name = "setup";
  setup.api_start_ns = 1'000;
  setup.gpu_start_ns = 2'000;
  setup.gpu_end_ns = 3'000;
  builder.add(setup);
  for (int64_t k = 1; k <= 3; ++k) {
    int64_t start = 10'000 * k;
    NvtxRangeRow range;
    range.name = "step " + std::to_string(k);
    range.start_ns = start;
    range.end_ns = start + 5'000;
    builder.add(range);
    KernelRow kernel;
    kernel.demangled_name = "train";
    kernel.api_start_ns = start + 100;
    kernel.gpu_start_ns = start + 1'000;
    kernel.gpu_end_ns = start + 3'000;
    builder.add(kernel);
    MemcpyRow copy;
    copy.bytes = 4096;
    copy.api_start_ns = start + 200;
    copy.gpu_start_ns = start + 2'000;
    copy.gpu_end_ns = start + 4'000;
    builder.add(copy);
  }
}

TEST(StepsReport, PerStepStartUpAndSummary) {
  TraceBuilder builder;
  build_three_steps(builder);
  ReportOutput output = run_report(steps_report, builder.db());
  ASSERT_EQ(output.tables.size(), 2u) << output.note;
  const Table& steps = output.tables[0];
  ASSERT_EQ(steps.rows.size(), 4u);
  EXPECT_EQ(text(steps, 0, "phase"), "start-up");
  EXPECT_TRUE(is_null(steps, 0, "step"));
  EXPECT_EQ(integer(steps, 0, "start_ns"), 1'000);  // the trace records no start: its first work
  EXPECT_EQ(integer(steps, 0, "wall_ns"), 9'000);
  EXPECT_EQ(integer(steps, 0, "gpu_busy_ns"), 1'000);
  EXPECT_EQ(integer(steps, 0, "launches"), 1);
  EXPECT_EQ(integer(steps, 0, "host_gap_ns"), 8'000);
  for (size_t row = 1; row <= 3; ++row) {
    EXPECT_EQ(text(steps, row, "phase"), "step");
    EXPECT_EQ(integer(steps, row, "step"), static_cast<int64_t>(row));
    EXPECT_EQ(integer(steps, row, "start_ns"), 10'000 * static_cast<int64_t>(row));
    EXPECT_EQ(integer(steps, row, "gpu_busy_ns"), 3'000);
    EXPECT_EQ(integer(steps, row, "launches"), 1);
    EXPECT_EQ(integer(steps, row, "copies"), 1);
    EXPECT_EQ(integer(steps, row, "memsets"), 0);
  }
  // To the next step's start; the last to its range's end.
  EXPECT_EQ(integer(steps, 1, "wall_ns"), 10'000);
  EXPECT_EQ(integer(steps, 1, "host_gap_ns"), 7'000);
  EXPECT_EQ(integer(steps, 3, "wall_ns"), 5'000);
  EXPECT_EQ(integer(steps, 3, "host_gap_ns"), 2'000);
  const Table& summary = output.tables[1];
  ASSERT_EQ(summary.rows.size(), 1u);
  EXPECT_EQ(integer(summary, 0, "steps"), 3);
  EXPECT_EQ(integer(summary, 0, "steady_steps"), 3);
  EXPECT_EQ(integer(summary, 0, "startup_ns"), 9'000);
  EXPECT_DOUBLE_EQ(real(summary, 0, "median_wall_ns"), 10'000.0);
  EXPECT_DOUBLE_EQ(real(summary, 0, "median_gpu_busy_ns"), 3'000.0);
  EXPECT_EQ(text(summary, 0, "found_from"), "NVTX ranges \"step\" (numbered by the program)");
}

TEST(StepsReport, LimitedToStepsListsThoseOnly) {
  TraceBuilder builder;
  build_three_steps(builder);
  trace::Trace trace(builder.db());
  trace.limit_to_steps(trace::StepSelection{std::make_pair(2, 3), false});
  ReportOutput output = steps_report(trace);
  ASSERT_EQ(output.tables.size(), 2u);
  const Table& steps = output.tables[0];
  ASSERT_EQ(steps.rows.size(), 2u);
  EXPECT_EQ(integer(steps, 0, "step"), 2);
  EXPECT_EQ(integer(steps, 1, "step"), 3);
  EXPECT_EQ(integer(steps, 0, "launches"), 1);
}

TEST(StepsReport, ATraceWithoutStepsSaysSo) {
  TraceBuilder builder;
  for (int64_t i = 0; i < 10; ++i) {
    KernelRow kernel;
    kernel.demangled_name = "once_" + std::to_string(i);
    kernel.api_start_ns = 1'000 * i;
    builder.add(kernel);
  }
  ReportOutput output = run_report(steps_report, builder.db());
  EXPECT_TRUE(output.tables.empty());
  EXPECT_EQ(output.note, "no steps: no NVTX step ranges and no repeating launch sequence");
}

using CommandRun = dvdg::CommandOutput;

class StepOptions : public ::testing::Test {
 protected:
  CommandRun apptracer(const std::string& arguments) { return dvdg::run_apptracer(arguments); }
  static std::string read(const std::string& path) { return dvdg::read_file(path); }

  const std::string example_ = std::string(APPTRACER_EXAMPLES) + "/pytorch_train.db";
  ScratchDir scratch_;
};

// The example's loop names its NVTX range "step", unnumbered.
TEST_F(StepOptions, TheBundledPyTorchTraceHasThirtySteps) {
  CommandRun run = apptracer("stats " + example_ + " --report steps --format json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  nlohmann::json document = nlohmann::json::parse(run.out);
  EXPECT_EQ(document["step_summary"][0]["steps"], 30);
  EXPECT_EQ(document["step_summary"][0]["found_from"], "NVTX ranges \"step\" (numbered in order)");
  EXPECT_EQ(document["steps"][0]["phase"], "start-up");
  EXPECT_EQ(document["steps"].back()["step"], 30);
}

// The example was recorded with the default framework context: its steady
// steps' modules and ops tables, and how its ops were sampled, said once for
// both.
TEST_F(StepOptions, ModulesAndOpsOfTheSteadyStepsSayHowOpsWereSampledOnce) {
  CommandRun run = apptracer("stats " + example_ + " --steady --report modules,ops --format json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  nlohmann::json document = nlohmann::json::parse(run.out);
  EXPECT_FALSE(document["modules"].empty());
  EXPECT_FALSE(document["ops"].empty());
  std::string note = "note: ops recorded for 1 in 16 calls";
  size_t first = run.err.find(note);
  ASSERT_NE(first, std::string::npos) << run.err;
  EXPECT_EQ(run.err.find(note, first + 1), std::string::npos) << run.err;
}

TEST_F(StepOptions, StatsLimitedToStepsSaysWhichAndCountsTheirWorkOnly) {
  CommandRun whole = apptracer("stats " + example_ + " --report processes --format json");
  CommandRun some = apptracer("stats " + example_ + " --report processes --steps 11-20 --format json");
  ASSERT_EQ(some.exit_code, 0) << some.err;
  EXPECT_NE(some.err.find("note: limited to steps 11-20 (from NVTX ranges \"step\""), std::string::npos)
      << some.err;
  int64_t all_kernels = nlohmann::json::parse(whole.out)["processes"][0]["kernels"];
  int64_t ten_steps = nlohmann::json::parse(some.out)["processes"][0]["kernels"];
  EXPECT_GT(ten_steps, 0);
  EXPECT_LT(ten_steps * 2, all_kernels);
}

TEST_F(StepOptions, DiagnoseOfTheSteadyStepsSaysWhatItLeftOut) {
  CommandRun run = apptracer("diagnose " + example_ + " --steady --json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  nlohmann::json document = nlohmann::json::parse(run.out);
  ASSERT_FALSE(document["notes"].empty());
  std::string note = document["notes"][0];
  EXPECT_EQ(note.rfind("limited to steady steps (from NVTX ranges \"step\"", 0), 0u) << note;
  EXPECT_NE(note.find("uninitialized_read"), std::string::npos) << note;
}

// The timeline of two steps: their calls and GPU work (as many kernels and
// copies as stats counts in them), their NVTX ranges, and each counter from
// the value it held as the first began.
TEST_F(StepOptions, TimelineOfSomeStepsDrawsThoseOnly) {
  std::string path = scratch_ / "steps.json";
  CommandRun run = apptracer("timeline " + example_ + " --steps 11-12 --format chrome-json -o " + path);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.err.find("steps 11-12 (from NVTX ranges \"step\""), std::string::npos) << run.err;
  CommandRun stats = apptracer("stats " + example_ + " --report processes --steps 11-12 --format json");
  ASSERT_EQ(stats.exit_code, 0) << stats.err;
  nlohmann::json process = nlohmann::json::parse(stats.out)["processes"][0];

  nlohmann::json events = nlohmann::json::parse(read(path))["traceEvents"];
  int64_t kernels = 0, copies = 0, calls = 0, steps = 0;
  double first_step = 1e300, first_counter = 1e300;
  for (const nlohmann::json& event : events) {
    std::string category = event.value("cat", "");
    if (event["ph"] == "C") first_counter = std::min(first_counter, event["ts"].get<double>());
    if (event["ph"] != "X") continue;
    kernels += category == "kernel";
    copies += category == "gpu_memcpy";
    calls += category == "cuda_runtime" || category == "cuda_driver";
    if (category == "user_annotation" && event["name"] == "step") {
      ++steps;
      first_step = std::min(first_step, event["ts"].get<double>());
    }
  }
  EXPECT_EQ(kernels, process["kernels"].get<int64_t>());
  EXPECT_EQ(copies, process["copies"].get<int64_t>());
  EXPECT_EQ(calls, process["api_calls"].get<int64_t>());
  EXPECT_EQ(steps, 2);
  EXPECT_LT(first_counter, 1e300) << "the memory counters are drawn";
  EXPECT_GE(first_counter, first_step);
}

TEST_F(StepOptions, BadOrMissingStepsAreOneLineErrors) {
  CommandRun bad = apptracer("stats " + example_ + " --steps 20-10");
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.err.find("give the step numbers as A-B"), std::string::npos) << bad.err;
  CommandRun missing = apptracer("diagnose " + example_ + " --steps 100-200");
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_NE(missing.err.find("the trace's steps are 1-30"), std::string::npos) << missing.err;
  EXPECT_EQ(std::count(missing.err.begin(), missing.err.end(), '\n'), 1) << missing.err;
  CommandRun both = apptracer("stats " + example_ + " --steps 1-2 --steady");
  EXPECT_NE(both.exit_code, 0);
}

}  // namespace
}  // namespace apptracer::testing
