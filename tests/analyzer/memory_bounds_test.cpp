// The analyzer's memory does not grow with the trace where it need not:
// `query` streams its rows, `timeline` streams its slices, and one absurd id
// in a damaged trace does not make `dvdg` reserve gigabytes. Each command
// runs on a small and a ten-times larger synthetic trace (bench/synthetic_trace.h)
// and its peak resident memory may grow only by a few MiB.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "apptracer/sqlite.h"
#include "child_cost.h"
#include "scratch_dir.h"
#include "synthetic_trace.h"

namespace apptracer {
namespace {

constexpr int64_t kSmall = 20'000;
constexpr int64_t kLarge = 200'000;
// Before streaming, timeline needed ~1.6 GB per million operations (~320 MiB
// more for the large trace) and query held every row (~300 MiB more).
constexpr double kMostGrowthMib = 24;

class MemoryBounds : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    for (int64_t size : {kSmall, kLarge}) {
      std::string path = trace(size);
      bench::write_synthetic_trace(path, size - size / 11, size / 11, /*api_calls=*/true);
    }
  }
  static void TearDownTestSuite() {
    for (int64_t size : {kSmall, kLarge}) std::remove(trace(size).c_str());
  }
  static std::string trace(int64_t size) {
    return ::testing::TempDir() + "memory_bounds_" + std::to_string(getpid()) + "_" +
           std::to_string(size) + ".db";
  }

  // Peak RSS of `apptracer ARGS` on the small and the large trace.
  std::pair<double, double> peaks(const std::vector<std::string>& arguments) {
    std::vector<double> peak;
    for (int64_t size : {kSmall, kLarge}) {
      std::vector<std::string> argv{APPTRACER_BIN};
      for (const std::string& argument : arguments) argv.push_back(argument == "TRACE" ? trace(size) : argument);
      bench::ChildCost cost = bench::run_child(argv);
      EXPECT_EQ(cost.exit_code, 0) << arguments[0];
      peak.push_back(cost.peak_mib);
    }
    return {peak[0], peak[1]};
  }
};

TEST_F(MemoryBounds, QueryStreamsItsRows) {
  for (const char* format : {"csv", "json", "table"}) {
    auto [small, large] = peaks({"query", "TRACE", "SELECT * FROM kernel_args", "--format", format});
    EXPECT_LT(large - small, kMostGrowthMib) << format << ": " << small << " -> " << large << " MiB";
  }
}

TEST_F(MemoryBounds, TimelineStreamsItsSlices) {
  // Each table the timeline streams is read ahead on a connection of its
  // own (read_ahead.h), which holds a few batches of rows and its own page
  // cache: a constant of about 12 MiB that the large trace fills and the
  // small one does not (on a trace of a million operations the timeline
  // peaks 6 MiB above reading on one connection).
  constexpr double kReadAheadMib = 16;
  for (const char* format : {"perfetto", "chrome-json"}) {
    auto [small, large] = peaks({"timeline", "TRACE", "--format", format, "-o", "/dev/null"});
    EXPECT_LT(large - small, kMostGrowthMib + kReadAheadMib)
        << format << ": " << small << " -> " << large << " MiB";
  }
}

TEST_F(MemoryBounds, AHugeIdDoesNotMakeDvdgReserveGigabytes) {
  testing::ScratchDir scratch;
  std::string path = scratch / "huge_id.db";
  bench::write_synthetic_trace(path, 1000, 100, true);
  {
    Database db(path, Database::Mode::ReadWrite);
    db.exec("UPDATE allocations SET id = 100000000 WHERE id = (SELECT max(id) FROM allocations)");
    db.exec("UPDATE kernels SET id = 120000000 WHERE id = (SELECT max(id) FROM kernels)");
  }
  bench::ChildCost cost = bench::run_child({APPTRACER_BIN, "dvdg", "--no-store", path});
  EXPECT_EQ(cost.exit_code, 0);
  EXPECT_LT(cost.peak_mib, 200) << "MiB";
}

}  // namespace
}  // namespace apptracer
