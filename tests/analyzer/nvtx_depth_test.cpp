// NVTX nesting costs `timeline` and `report` at most a log factor: the same
// launches under 3,000 nested ranges (each around every launch) take about
// as long as under none. Walking each range's launches made depth 3,000
// thirteen times slower at 100k launches. Compared in CPU time, which other
// work on the machine changes less than wall time, with room for noise.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "child_cost.h"
#include "scratch_dir.h"
#include "synthetic_trace.h"

namespace apptracer {
namespace {

constexpr int64_t kLaunches = 20'000;
constexpr int64_t kDeepNesting = 3'000;
// Deep may cost this much more than flat (the ranges themselves are slices
// too), plus a fixed allowance for timer noise on a busy machine.
constexpr double kMostRatio = 2.0;
constexpr double kNoiseS = 0.5;

class NvtxDepth : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    scratch_ = new testing::ScratchDir();
    bench::write_synthetic_trace(trace(0), kLaunches, kLaunches / 10, /*api_calls=*/true, false, 0);
    bench::write_synthetic_trace(trace(kDeepNesting), kLaunches, kLaunches / 10, true, false,
                                 kDeepNesting);
  }
  static void TearDownTestSuite() {
    delete scratch_;
    scratch_ = nullptr;
  }
  static std::string trace(int64_t depth) { return *scratch_ / ("depth" + std::to_string(depth) + ".db"); }

  // CPU seconds of `apptracer ARGS` on the flat and the deeply nested trace.
  static std::pair<double, double> cpu_seconds(const std::vector<std::string>& arguments) {
    std::vector<double> seconds;
    for (int64_t depth : {int64_t{0}, kDeepNesting}) {
      std::vector<std::string> argv{APPTRACER_BIN};
      for (const std::string& argument : arguments) {
        argv.push_back(argument == "TRACE" ? trace(depth) : argument == "OUT" ? *scratch_ / "out" : argument);
      }
      bench::ChildCost cost = bench::run_child(argv);
      EXPECT_EQ(cost.exit_code, 0) << arguments[0] << " at depth " << depth;
      seconds.push_back(cost.user_s + cost.system_s);
    }
    std::printf("%s: %.2f s CPU at NVTX depth 0, %.2f s at depth %lld\n", arguments[0].c_str(), seconds[0],
                seconds[1], static_cast<long long>(kDeepNesting));
    std::fflush(stdout);  // before the next child inherits the buffer
    return {seconds[0], seconds[1]};
  }

  static testing::ScratchDir* scratch_;
};

testing::ScratchDir* NvtxDepth::scratch_ = nullptr;

TEST_F(NvtxDepth, TimelineCostsAtMostALogFactor) {
  for (const char* format : {"perfetto", "chrome-json"}) {
    auto [flat, deep] = cpu_seconds({"timeline", "TRACE", "--format", format, "--force", "-o", "OUT"});
    EXPECT_LT(deep, flat * kMostRatio + kNoiseS) << format << ": " << flat << " s flat, " << deep << " s deep";
  }
}

TEST_F(NvtxDepth, ReportCostsAtMostALogFactor) {
  auto [flat, deep] = cpu_seconds({"report", "TRACE", "--force", "-o", "OUT"});
  EXPECT_LT(deep, flat * kMostRatio + kNoiseS) << flat << " s flat, " << deep << " s deep";
}

}  // namespace
}  // namespace apptracer
