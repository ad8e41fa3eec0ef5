// `apptracer diff` on fabricated traces: a pageable run and its pinned twin
// (the copy path change comes first, priced at the measured difference), per
// step, per DVDG producer, and the comparison's own rules (what appeared or
// disappeared, order by impact).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "command_runner.h"
#include "analyzer/diff/device_labels.h"
#include "analyzer/diff/profile_diff.h"
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
// into a buffer on `device` taking `copy_ns` on the GPU, then a kernel
// reading that buffer into another.
struct ProgramRun {
  AllocKind host = AllocKind::PageableHost;
  int64_t copy_ns = 0;
  bool numbered_steps = false;
  bool library_ranges = false;  // NCCL's own NVTX ranges too, three per step, beside it
  int64_t device = 0;
  // The host buffer's allocating call's host time (0: allocated by malloc,
  // no call recorded).
  int64_t alloc_call_ns = 0;
  // The PyTorch module each step's kernel is launched in (framework
  // context); empty: the trace names no module, and its launches no call.
  std::string module;
};

ProgramRun run_of(AllocKind host, int64_t copy_ns) {
  ProgramRun run;
  run.host = host;
  run.copy_ns = copy_ns;
  return run;
}

void write_run(const std::string& path, const ProgramRun& run) {
  TraceBuilder trace(path);
  testing::DeviceRow gpu;
  gpu.id = run.device;
  trace.add_device(gpu);
  testing::AllocationRow source;
  source.kind = run.host;
  source.device = std::nullopt;
  source.address = 0x10000;
  source.bytes = kBytes;
  if (run.alloc_call_ns > 0) {
    testing::ApiCallRow call;
    call.name = "cudaMallocHost";
    call.correlation_id = 1;
    call.start_ns = 1'000;
    call.end_ns = call.start_ns + run.alloc_call_ns;
    trace.add(call);
    source.alloc_correlation_id = call.correlation_id;
  }
  int64_t source_id = trace.add(source);
  testing::AllocationRow input, output;
  input.device = output.device = run.device;
  input.address = 0x7f0000000000;
  output.address = input.address + 2 * kBytes;
  input.bytes = output.bytes = kBytes;
  int64_t input_id = trace.add(input);
  int64_t output_id = trace.add(output);
  for (int64_t step = 0; step < kSteps; ++step) {
    int64_t start = 10'000 + step * kStepNs;
    testing::NvtxRangeRow range;
    range.name = run.numbered_steps ? "step " + std::to_string(step + 1) : "step";
    range.start_ns = start;
    range.end_ns = start + run.copy_ns + kKernelNs + 1'000;
    trace.add(range);
    for (int i = 0; run.library_ranges && i < 3; ++i) {
      testing::NvtxRangeRow library;
      library.name = "ncclAllGather";
      library.start_ns = start + 10 * i;
      library.end_ns = start + 10 * i + 5;
      trace.add(library);
    }
    testing::MemcpyRow copy;
    copy.src_memory = memory_kind_of(run.host);
    copy.dst_device = run.device;
    copy.bytes = kBytes;
    copy.src_address = source.address;
    copy.dst_address = input.address;
    copy.src_alloc_id = source_id;
    copy.dst_alloc_id = input_id;
    copy.src_offset = copy.dst_offset = 0;
    copy.api_start_ns = start + 100;
    copy.gpu_start_ns = start + 200;
    copy.gpu_end_ns = start + 200 + run.copy_ns;
    trace.add(copy);
    testing::KernelRow kernel;
    kernel.device = run.device;
    kernel.api_start_ns = start + 300;
    if (!run.module.empty()) {
      testing::ApiCallRow launch;
      launch.name = "cudaLaunchKernel";
      launch.correlation_id = 100 + step;
      launch.start_ns = start + 300;
      launch.end_ns = start + 305;
      trace.add(launch);
      kernel.call_correlation_id = launch.correlation_id;
      trace.add_framework_range(FrameworkRangeKind::Module, run.module, start + 250, start + 400);
    }
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
// Pinning the host buffer: far longer on the host than all the copy time it saves.
constexpr int64_t kPinningNs = 52'800'000;
const char* const kPathChange = "HtoD pageable->device gpu0 -> HtoD pinned->device gpu0";

// A pageable run (A) and its pinned twin (B), whose steps are numbered
// NVTX ranges ("step 1", ...): the same steps. B's cudaMallocHost took
// longer on the host than the GPU time its copies saved.
class PinnedTwin : public ::testing::Test {
 protected:
  PinnedTwin() {
    write_run(dir / "pageable.db", run_of(AllocKind::PageableHost, kPageableNs));
    ProgramRun pinned = run_of(AllocKind::PinnedHost, kPinnedNs);
    pinned.numbered_steps = true;
    pinned.alloc_call_ns = kPinningNs;
    write_run(dir / "pinned.db", pinned);
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

  // The allocating calls' host time: a column of its own, ranked after GPU time.
  EXPECT_EQ(find_row(tables["operations"], "allocation", "pageable host")["change"], "disappeared");
  nlohmann::json pinning = find_row(tables["operations"], "allocation", "pinned host");
  EXPECT_EQ(pinning["change"], "appeared");
  EXPECT_EQ(pinning["host_ns_b"], kPinningNs);
  EXPECT_EQ(pinning["time_ns_b"], 0);
  EXPECT_EQ(pinning["bytes_b"], kBytes);
  EXPECT_EQ(first["host_ns_diff"], 0);
  EXPECT_EQ(tables["operations"].at(1), pinning);

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
  EXPECT_EQ(result.out.find("devices:"), std::string::npos) << result.out;
}

// A library's ranges repeat more often than the steps: numbered ranges
// ("step 5") are the steps.
TEST(DiffCommand, NumberedRangesAreTheStepsBeforeALibrarysRanges) {
  ScratchDir dir;
  ProgramRun a = run_of(AllocKind::PageableHost, kPageableNs), b = run_of(AllocKind::PinnedHost, kPinnedNs);
  a.numbered_steps = b.numbered_steps = true;
  a.library_ranges = b.library_ranges = true;
  write_run(dir / "a.db", a);
  write_run(dir / "b.db", b);
  auto result = run_apptracer("diff " + dir / "a.db" + " " + dir / "b.db" + " --no-dvdg");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("NVTX range \"step\""), std::string::npos) << result.out;
}

TEST(DiffCommand, ATraceAgainstItselfChangesNothing) {
  ScratchDir dir;
  write_run(dir / "run.db", run_of(AllocKind::PageableHost, kPageableNs));
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

// Two runs that name PyTorch's modules compare their work per module and
// op; where only one does, a note says so and nothing is compared.
TEST(DiffCommand, ModulesAndOpsCompareWhereBothRunsNameThem) {
  ScratchDir dir;
  ProgramRun encoder = run_of(AllocKind::PageableHost, kPageableNs);
  encoder.module = "encoder";
  ProgramRun decoder = encoder;
  decoder.module = "decoder";
  write_run(dir / "encoder.db", encoder);
  write_run(dir / "decoder.db", decoder);
  write_run(dir / "unnamed.db", run_of(AllocKind::PageableHost, kPageableNs));
  auto both = run_apptracer("diff " + dir / "encoder.db" + " " + dir / "decoder.db" + " --json --no-dvdg");
  ASSERT_EQ(both.exit_code, 0) << both.err;
  nlohmann::json tables = nlohmann::json::parse(both.out);
  ASSERT_TRUE(tables.contains("modules_and_ops")) << both.out;
  nlohmann::json gone = find_row(tables["modules_and_ops"], "module", "encoder (forward)");
  EXPECT_EQ(gone["change"], "disappeared");
  EXPECT_EQ(gone["launches_a"], kSteps);
  EXPECT_EQ(gone["time_ns_a"], kSteps * kKernelNs);
  EXPECT_EQ(find_row(tables["modules_and_ops"], "module", "decoder (forward)")["change"], "appeared");

  auto one = run_apptracer("diff " + dir / "unnamed.db" + " " + dir / "decoder.db" + " --no-dvdg");
  ASSERT_EQ(one.exit_code, 0) << one.err;
  EXPECT_EQ(one.out.find("== modules_and_ops =="), std::string::npos) << one.out;
  EXPECT_NE(one.out.find("modules and ops: only B names them"), std::string::npos) << one.out;
}

TEST(DiffCommand, AMissingTraceIsOneLineNamingIt) {
  ScratchDir dir;
  write_run(dir / "run.db", run_of(AllocKind::PageableHost, kPageableNs));
  auto result = run_apptracer("diff " + dir / "run.db" + " " + dir / "missing.db");
  EXPECT_NE(result.exit_code, 0);
  EXPECT_NE(result.err.find("missing.db"), std::string::npos) << result.err;
  EXPECT_EQ(result.err.find('\n'), result.err.size() - 1) << result.err;
  EXPECT_TRUE(result.out.empty()) << result.out;
}

// Two ranks of one job, rank 0 on gpu0 and rank 1 on gpu1: their devices are
// matched, not "gpu0 gone, gpu1 new", and the text says so.
TEST(DiffCommand, TracesOfOneGpuEachCompareTheirDevicesAsOne) {
  ScratchDir dir;
  write_run(dir / "rank0.db", run_of(AllocKind::PinnedHost, kPinnedNs));
  ProgramRun rank1 = run_of(AllocKind::PinnedHost, kPinnedNs + 500);
  rank1.device = 1;
  write_run(dir / "rank1.db", rank1);
  auto result = run_apptracer("diff " + dir / "rank0.db" + " " + dir / "rank1.db" + " --json");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  nlohmann::json tables = nlohmann::json::parse(result.out);
  nlohmann::json copies = find_row(tables["operations"], "copy path", "HtoD pinned->device gpu");
  EXPECT_EQ(copies["change"], "changed");
  EXPECT_EQ(copies["time_ns_diff"], kSteps * 500);
  EXPECT_EQ(find_row(tables["dvdg"], "copy path", "HtoD pinned->device gpu")["change"], "same");
  for (const auto& [name, table] : tables.items()) {
    for (const nlohmann::json& row : table) {
      EXPECT_NE(row["change"], "appeared") << name << ": " << row.dump();
      EXPECT_NE(row["change"], "disappeared") << name << ": " << row.dump();
    }
  }
  auto text = run_apptracer("diff " + dir / "rank0.db" + " " + dir / "rank1.db" + " --no-dvdg");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("devices: A ran on gpu0 only and B on gpu1 only"), std::string::npos) << text.out;
}

TEST(DeviceLabels, OnlyOneGpuEachOnDifferentGpusIsNamedAlike) {
  ComparedDevices apart = compare_devices({0}, {1});
  EXPECT_EQ(apart.a(0), "gpu");
  EXPECT_EQ(apart.b(1), "gpu");
  EXPECT_EQ(apart.b(std::nullopt), "host");
  EXPECT_FALSE(apart.note.empty());
  for (const ComparedDevices& by_ordinal : {compare_devices({0}, {0}), compare_devices({0, 1}, {1}),
                                            compare_devices({}, {1})}) {
    EXPECT_EQ(by_ordinal.a(0), "gpu0");
    EXPECT_EQ(by_ordinal.b(1), "gpu1");
    EXPECT_TRUE(by_ordinal.note.empty());
  }
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
  Table table = diff_profiles("t", a, b, {"time_ns"});
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

// GPU time, then host time: a large host-time change never leads.
TEST(DiffProfiles, ImpactsRankInTheirOrder) {
  Profile a, b;
  a.measures = b.measures = {"count", "time_ns", "host_ns"};
  a.entries[{"copy path", "faster", ""}] = {1, 900, 0};
  b.entries[{"copy path", "faster", ""}] = {1, 300, 0};
  b.entries[{"allocation", "pinned host", ""}] = {1, 0, 50'000'000};
  a.entries[{"kernel", "same", ""}] = b.entries[{"kernel", "same", ""}] = {1, 40, 0};
  a.entries[{"allocation", "device", ""}] = {2, 0, 10};
  b.entries[{"allocation", "device", ""}] = {1, 0, 10};
  Table table = diff_profiles("t", a, b, {"time_ns", "host_ns"});
  std::vector<std::string> order;
  for (size_t row = 0; row < table.rows.size(); ++row) order.push_back(testing::text(table, row, "name"));
  EXPECT_EQ(order, (std::vector<std::string>{"faster", "pinned host", "device", "same"}));
  EXPECT_THROW(diff_profiles("t", a, b, {"time_ns", "edges"}), std::invalid_argument);
}

TEST(DiffProfiles, OnlyWorkOfOneRouteIsPairedAsAPathChange) {
  Profile a = profile_of({{{"copy path", "HtoD pageable->device gpu0", "HtoD gpu0"}, {2, 900}},
                          {{"copy path", "DtoH device->pageable gpu0", "DtoH gpu0"}, {1, 50}}});
  Profile b = profile_of({{{"copy path", "HtoD pinned->device gpu0", "HtoD gpu0"}, {2, 300}},
                          {{"copy path", "DtoH device->pinned gpu1", "DtoH gpu1"}, {1, 20}}});
  Table table = diff_profiles("t", a, b, {"time_ns"});
  ASSERT_EQ(table.rows.size(), 3u);
  EXPECT_EQ(testing::text(table, 0, "name"), "HtoD pageable->device gpu0 -> HtoD pinned->device gpu0");
  EXPECT_EQ(testing::text(table, 0, "change"), "path changed");
  EXPECT_EQ(testing::integer(table, 0, "time_ns_diff"), -600);
  EXPECT_EQ(testing::text(table, 1, "change"), "disappeared");
  EXPECT_EQ(testing::text(table, 2, "change"), "appeared");
}

}  // namespace
}  // namespace apptracer::diff
