// `apptracer diff` on fabricated traces: a pageable run and its pinned twin
// (the copy path change comes first, priced at the measured difference), per
// step, per DVDG producer, and the comparison's own rules (what appeared or
// disappeared, order by impact).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "command_runner.h"
#include "profile_diff.h"
#include "report_test_helpers.h"
#include "scratch_dir.h"
#include "trace_builder.h"

namespace apptracer::diff {
namespace {

using dvdg::run_apptracer;
using testing::ScratchDir;
using testing::TraceBuilder;

constexpr int64_t kBytes = int64_t{4} << 20;
constexpr int64_t kSteps = 3;
constexpr int64_t kStepNs = 1'000'000;
constexpr int64_t kKernelNs = 50'000;

// One program run: per step (an NVTX range "step", or "step 1", "step 2",
// ... with `numbered_steps`), a 4 MiB copy from host memory of `host` kind
// into a device buffer taking `copy_ns` on the GPU, then a kernel reading
// that buffer into another.
// `library_ranges`: NCCL's own NVTX ranges too, three per step, beside it.
void write_run(const std::string& path, AllocKind host, int64_t copy_ns, bool numbered_steps = false,
               bool library_ranges = false) {
  TraceBuilder trace(path);
  trace.add_device(testing::DeviceRow{});
  testing::AllocationRow source;
  source.kind = host;
  source.device = std::nullopt;
  source.address = 0x10000;
  source.bytes = kBytes;
  int64_t source_id = trace.add(source);
  testing::AllocationRow input, output;
  input.address = 0x7f0000000000;
  output.address = input.address + 2 * kBytes;
  input.bytes = output.bytes = kBytes;
  int64_t input_id = trace.add(input);
  int64_t output_id = trace.add(output);
  for (int64_t step = 0; step < kSteps; ++step) {
    int64_t start = 10'000 + step * kStepNs;
    testing::NvtxRangeRow range;
    range.name = numbered_steps ? "step " + std::to_string(step + 1) : "step";
    range.start_ns = start;
    range.end_ns = start + copy_ns + kKernelNs + 1'000;
    trace.add(range);
    for (int i = 0; library_ranges && i < 3; ++i) {
      testing::NvtxRangeRow library;
      library.name = "ncclAllGather";
      library.start_ns = start + 10 * i;
      library.end_ns = start + 10 * i + 5;
      trace.add(library);
    }
    testing::MemcpyRow copy;
    copy.src_memory = memory_kind_of(host);
    copy.bytes = kBytes;
    copy.src_address = source.address;
    copy.dst_address = input.address;
    copy.src_alloc_id = source_id;
    copy.dst_alloc_id = input_id;
    copy.src_offset = copy.dst_offset = 0;
    copy.api_start_ns = start + 100;
    copy.gpu_start_ns = start + 200;
    copy.gpu_end_ns = start + 200 + copy_ns;
    trace.add(copy);
    testing::KernelRow kernel;
    kernel.api_start_ns = start + 300;
    kernel.gpu_start_ns = *copy.gpu_end_ns + 100;
    kernel.gpu_end_ns = *kernel.gpu_start_ns + kKernelNs;
    int64_t kernel_id = trace.add(kernel);
    testing::KernelArgRow read, write;
    read.kernel_id = write.kernel_id = kernel_id;
    read.raw_value = input.address;
    read.alloc_id = input_id;
    read.alloc_offset = 0;
    read.access = AccessKind::Read;
    write.param_index = 1;
    write.offset = 8;
    write.raw_value = output.address;
    write.alloc_id = output_id;
    write.alloc_offset = 0;
    write.access = AccessKind::Write;
    trace.add(read);
    trace.add(write);
  }
}

nlohmann::json find_row(const nlohmann::json& table, const std::string& category,
                        const std::string& name) {
  for (const nlohmann::json& row : table) {
    if (row["category"] == category && row["name"] == name) return row;
  }
  ADD_FAILURE() << "no row " << category << " " << name << " in " << table.dump();
  return {};
}

constexpr int64_t kPageableNs = 1'300'000 / 2;
constexpr int64_t kPinnedNs = 320'000 / 2;
const char* const kPathChange = "HtoD pageable->device gpu0 -> HtoD pinned->device gpu0";

// A pageable run (A) and its pinned twin (B), whose steps are numbered
// NVTX ranges ("step 1", ...): the same steps.
class PinnedTwin : public ::testing::Test {
 protected:
  PinnedTwin() {
    write_run(dir / "pageable.db", AllocKind::PageableHost, kPageableNs);
    write_run(dir / "pinned.db", AllocKind::PinnedHost, kPinnedNs, true);
  }
  dvdg::CommandOutput diff(const std::string& options) {
    return run_apptracer("diff " + dir / "pageable.db" + " " + dir / "pinned.db" + " " + options);
  }

  ScratchDir dir;
};

TEST_F(PinnedTwin, NamesTheCopyPathChangeFirstWithItsMeasuredTime) {
  auto result = diff("--json");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  nlohmann::json tables = nlohmann::json::parse(result.out);

  const nlohmann::json& first = tables["operations"].at(0);
  EXPECT_EQ(first["category"], "copy path");
  EXPECT_EQ(first["name"], kPathChange);
  EXPECT_EQ(first["change"], "path changed");
  EXPECT_EQ(first["count_a"], kSteps);
  EXPECT_EQ(first["count_b"], kSteps);
  EXPECT_EQ(first["time_ns_a"], kSteps * kPageableNs);
  EXPECT_EQ(first["time_ns_diff"], kSteps * (kPinnedNs - kPageableNs));
  EXPECT_EQ(first["bytes_diff"], 0);

  nlohmann::json kernel = find_row(tables["operations"], "kernel", "kernel()");
  EXPECT_EQ(kernel["change"], "same");
  EXPECT_EQ(kernel["time_ns_a"], kSteps * kKernelNs);
  EXPECT_EQ(find_row(tables["operations"], "allocation", "pageable host")["change"], "disappeared");
  EXPECT_EQ(find_row(tables["operations"], "allocation", "pinned host")["change"], "appeared");

  // The ranges enclosing the work, apart from it.
  EXPECT_EQ(find_row(tables["nvtx_ranges"], "nvtx range", "step")["change"], "disappeared");
  EXPECT_EQ(find_row(tables["nvtx_ranges"], "nvtx range", "step 1")["time_ns_b"],
            kPinnedNs + kKernelNs + 1'000);

  // Steps: each is shorter by one copy's difference.
  ASSERT_EQ(tables["steps"].size(), static_cast<size_t>(kSteps));
  for (const nlohmann::json& step : tables["steps"]) {
    EXPECT_EQ(step["time_ns_diff"], kPinnedNs - kPageableNs) << step.dump();
    EXPECT_EQ(step["copy_ns_diff"], kPinnedNs - kPageableNs) << step.dump();
    EXPECT_EQ(step["kernel_ns_diff"], 0) << step.dump();
  }
  EXPECT_EQ(tables["steps"][0]["name"], "step 000001");

  // The graph: the same values and edges, the same bytes moved, on another path.
  nlohmann::json copies = find_row(tables["dvdg"], "copy path", kPathChange);
  EXPECT_EQ(copies["edges_a"], kSteps);
  EXPECT_EQ(copies["edge_bytes_b"], kSteps * kBytes);
  EXPECT_EQ(copies["edge_bytes_diff"], 0);
  nlohmann::json kernel_flow = find_row(tables["dvdg"], "kernel", "kernel()");
  EXPECT_EQ(kernel_flow["values_a"], kSteps);
  EXPECT_EQ(kernel_flow["edges_diff"], 0);
}

TEST_F(PinnedTwin, TextSaysWhatItComparesAndLeadsWithTheLargestChange) {
  auto result = diff("--no-dvdg");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("B minus A"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("NVTX range \"step\""), std::string::npos) << result.out;
  size_t heading = result.out.find("== operations ==");
  ASSERT_NE(heading, std::string::npos) << result.out;
  size_t first_row = result.out.find("copy path", heading);
  EXPECT_LT(first_row, result.out.find("kernel", heading)) << result.out;
  EXPECT_EQ(result.out.find("== dvdg =="), std::string::npos) << result.out;
}

// A library's ranges repeat more often than the steps: numbered ranges
// ("step 5") are the steps.
TEST(DiffCommand, NumberedRangesAreTheStepsBeforeALibrarysRanges) {
  ScratchDir dir;
  write_run(dir / "a.db", AllocKind::PageableHost, kPageableNs, true, true);
  write_run(dir / "b.db", AllocKind::PinnedHost, kPinnedNs, true, true);
  auto result = run_apptracer("diff " + dir / "a.db" + " " + dir / "b.db" + " --no-dvdg");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("NVTX range \"step\""), std::string::npos) << result.out;
}

TEST(DiffCommand, ATraceAgainstItselfChangesNothing) {
  ScratchDir dir;
  write_run(dir / "run.db", AllocKind::PageableHost, kPageableNs);
  auto result = run_apptracer("diff " + dir / "run.db" + " " + dir / "run.db" + " --json");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  nlohmann::json tables = nlohmann::json::parse(result.out);
  size_t rows = 0;
  for (const auto& [name, table] : tables.items()) {
    for (const nlohmann::json& row : table) {
      EXPECT_EQ(row["change"], "same") << name << ": " << row.dump();
      ++rows;
    }
  }
  EXPECT_GT(rows, 5u);
}

TEST(DiffCommand, AMissingTraceIsOneLineNamingIt) {
  ScratchDir dir;
  write_run(dir / "run.db", AllocKind::PageableHost, kPageableNs);
  auto result = run_apptracer("diff " + dir / "run.db" + " " + dir / "missing.db");
  EXPECT_NE(result.exit_code, 0);
  EXPECT_NE(result.err.find("missing.db"), std::string::npos) << result.err;
  EXPECT_EQ(result.err.find('\n'), result.err.size() - 1) << result.err;
  EXPECT_TRUE(result.out.empty()) << result.out;
}

Profile profile_of(std::initializer_list<std::pair<ProfileKey, std::vector<int64_t>>> entries) {
  Profile profile;
  profile.measures = {"count", "time_ns"};
  for (const auto& [key, measures] : entries) profile.entries[key] = measures;
  return profile;
}

TEST(DiffProfiles, AppearedAndDisappearedSortedByAbsoluteImpact) {
  Profile a = profile_of({{{"kernel", "gone", ""}, {1, 500}},
                          {{"kernel", "slower", ""}, {2, 100}},
                          {{"kernel", "same", ""}, {4, 40}}});
  Profile b = profile_of({{{"kernel", "new", ""}, {1, 200}},
                          {{"kernel", "slower", ""}, {2, 1100}},
                          {{"kernel", "same", ""}, {4, 40}}});
  Table table = diff_profiles("t", a, b, "time_ns");
  ASSERT_EQ(table.rows.size(), 4u);
  std::vector<std::string> order, changes;
  for (size_t row = 0; row < table.rows.size(); ++row) {
    order.push_back(testing::text(table, row, "name"));
    changes.push_back(testing::text(table, row, "change"));
  }
  EXPECT_EQ(order, (std::vector<std::string>{"slower", "gone", "new", "same"}));
  EXPECT_EQ(changes, (std::vector<std::string>{"changed", "disappeared", "appeared", "same"}));
  EXPECT_EQ(testing::integer(table, 0, "time_ns_diff"), 1000);
  EXPECT_EQ(testing::integer(table, 1, "time_ns_diff"), -500);
  EXPECT_EQ(testing::integer(table, 2, "count_a"), 0);
}

TEST(DiffProfiles, OnlyWorkOfOneRouteIsPairedAsAPathChange) {
  Profile a = profile_of({{{"copy path", "HtoD pageable->device gpu0", "HtoD gpu0"}, {2, 900}},
                          {{"copy path", "DtoH device->pageable gpu0", "DtoH gpu0"}, {1, 50}}});
  Profile b = profile_of({{{"copy path", "HtoD pinned->device gpu0", "HtoD gpu0"}, {2, 300}},
                          {{"copy path", "DtoH device->pinned gpu1", "DtoH gpu1"}, {1, 20}}});
  Table table = diff_profiles("t", a, b, "time_ns");
  ASSERT_EQ(table.rows.size(), 3u);
  EXPECT_EQ(testing::text(table, 0, "name"), "HtoD pageable->device gpu0 -> HtoD pinned->device gpu0");
  EXPECT_EQ(testing::text(table, 0, "change"), "path changed");
  EXPECT_EQ(testing::integer(table, 0, "time_ns_diff"), -600);
  EXPECT_EQ(testing::text(table, 1, "change"), "disappeared");
  EXPECT_EQ(testing::text(table, 2, "change"), "appeared");
}

}  // namespace
}  // namespace apptracer::diff
