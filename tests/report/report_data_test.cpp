// What `apptracer report` puts in the page: the sections' data from a
// synthetic trace (the steady-state step and diagnose's findings first,
// where the time went, the timeline over the steady steps or the program's
// work, unified-memory migrations, bandwidth above a path's peak explained,
// memory by owner with its live set at the peak), the graph limit, what-if
// predictions with a system file and stored tables when present, only what
// changed against another trace, and a page whose inline data cannot end its
// <script> early.
#include <gtest/gtest.h>

#include <fstream>
#include <map>

#include "analyzer/diagnose/diagnosis.h"
#include "analyzer/diagnose/findings_output.h"
#include "analyzer/trace/short_names.h"
#include "analyzer/report/bandwidth_against_peak.h"
#include "analyzer/report/changed_rows.h"
#include "diagnose_fixture.h"
#include "analyzer/report/perfetto_embed.h"
#include "analyzer/report/report_data.h"
#include "analyzer/report/report_page.h"
#include "scratch_dir.h"

namespace apptracer::report {
namespace {

using A = AccessKind;

class ReportData : public diagnose::DiagnoseTest {
 protected:
  // A system file in `dir` whose host-to-device paths go at 20 GB/s pinned
  // and 5 GB/s pageable, without latency; returns its path.
  static std::string write_system(const testing::ScratchDir& dir) {
    std::string path = dir / "system.json";
    std::ofstream(path) << R"({"format": "apptracer system", "version": 1, "machine": {"hostname": "testbox",
      "gpus": [{"ordinal": 0, "name": "", "numa_node": 0}]}, "paths": [
      {"name": "HtoD.pinned.node0.gpu0", "model": {"latency_ns": 0, "bandwidth": [{"bytes": 1, "gbps": 20}]}},
      {"name": "HtoD.pageable.node0.gpu0", "model": {"latency_ns": 0, "bandwidth": [{"bytes": 1, "gbps": 5}]}}]})";
    return path;
  }
};

TEST_F(ReportData, SectionsFromATrace) {
  int64_t host = buffer(AllocKind::PinnedHost, 1'000'000);
  int64_t device = buffer(AllocKind::Device, 1'000'000);
  pinned_copy(host, device, 1000, 10'000);
  pinned_copy(host, device, 1'000'000, 20'000);
  kernel("work", 200'000, 50'000, {{device, A::ReadWrite}});
  testing::NvtxRangeRow range;
  range.name = "step";
  range.start_ns = 0;
  range.end_ns = 300'000;
  trace.add(range);
  trace::Trace model(trace.db());
  nlohmann::json data = report_data(model, "t.db", "");
  EXPECT_EQ(data["summary"]["kernels"], 1);
  ASSERT_EQ(data["summary"]["paths"].size(), 1u);
  const auto& path = data["summary"]["paths"][0];
  EXPECT_EQ(path["path"], "HtoD pinned, device 0");
  EXPECT_EQ(path["bytes"], 1'001'000);
  // Peak: the fitted path's bandwidth for a 1 GiB copy, 2 us + 1 GiB / 10 GB/s.
  EXPECT_NEAR(path["peak_gbps"].get<double>(), 1073741824.0 / (2000 + 107374182.4), 1e-9);
  EXPECT_EQ(data["kernels"][0]["name"], "work()");
  EXPECT_EQ(data["transfers"].size(), 2u);
  ASSERT_EQ(data["nvtx"].size(), 1u);
  EXPECT_EQ(data["nvtx"][0]["gpu_ns"], diagnose::pinned_ns(1000) + diagnose::pinned_ns(1'000'000) + 50'000);
  EXPECT_EQ(data["dvdg"]["values"].size(), data["dvdg"]["total_values"]);
  EXPECT_TRUE(data["whatif"]["runs"].is_null()) << "no system file, no prediction";
  EXPECT_TRUE(data["whatif"]["stored"].empty());
  EXPECT_EQ(data["analyses"].size(), 8u);
}

// Top kernels are shown by their short names, as stats shows them; two
// kernels the short name cannot tell apart are numbered; the whole names
// stay beside them.
TEST_F(ReportData, TopKernelsAreShownByShortNamesAlikeOnesNumbered) {
  int64_t device = buffer(AllocKind::Device, 4096);
  kernel("void k<1, at::Functor>", 10'000, 50'000, {{device, A::ReadWrite}});
  kernel("void k<2, at::Functor>", 100'000, 20'000, {{device, A::ReadWrite}});
  trace::Trace model(trace.db());
  nlohmann::json data = report_data(model, "t.db", "");
  ASSERT_EQ(data["kernels"].size(), 2u);
  EXPECT_EQ(data["kernels"][0]["name"], "void k<1, at::Functor>()");
  EXPECT_EQ(data["kernels"][0]["short_name"], "k<Functor> [1]");
  EXPECT_EQ(data["kernels"][1]["short_name"], "k<Functor> [2]");
}

// Where the trace names PyTorch's modules and ops, the report lists the work
// issued in each, as stats --report modules and ops do; where it names
// none, there is no such section.
TEST_F(ReportData, ModulesAndOpsWhereTheTraceNamesThem) {
  int64_t device = buffer(AllocKind::Device, 1'000'000);
  kernel("gemm", 200'000, 50'000, {{device, A::ReadWrite}});  // its call at 199,000 on thread 1
  {
    trace::Trace model(trace.db());
    EXPECT_TRUE(report_data(model, "t.db", "")["modules"].is_null());
  }
  trace.add_framework_range(FrameworkRangeKind::Module, "encoder.layer", 198'000, 199'900);
  trace.add_framework_range(FrameworkRangeKind::Op, "aten::mm", 198'500, 199'800);
  trace::Trace model(trace.db());
  nlohmann::json modules = report_data(model, "t.db", "")["modules"];
  ASSERT_FALSE(modules.is_null());
  // The kernel's module, then (none): the buffer, allocated outside any.
  ASSERT_EQ(modules["modules"]["rows"].size(), 2u) << modules.dump();
  EXPECT_EQ(modules["modules"]["rows"][0][0], "encoder.layer");
  EXPECT_EQ(modules["modules"]["rows"][1][0], "(none)");
  EXPECT_EQ(modules["modules"]["rows"][0][1], "forward");
  EXPECT_EQ(modules["ops"]["rows"][0][0], "aten::mm");
  EXPECT_EQ(modules["ops"]["columns"].back(), "gpu_ns");
}

// A kernel reading pinned host memory in place: bytes over the host path that
// no copy moved, listed beside the copies' paths (a bound: its pointer's reach).
TEST_F(ReportData, KernelTrafficOverAPathIsListed) {
  int64_t host = buffer(AllocKind::PinnedHost, 1'000'000);
  kernel("gather", 200'000, 50'000, {{host, A::Read}});
  trace::Trace model(trace.db());
  nlohmann::json data = report_data(model, "t.db", "");
  ASSERT_EQ(data["kernel_traffic"].size(), 1u) << data["kernel_traffic"].dump();
  const auto& row = data["kernel_traffic"][0];
  EXPECT_EQ(row["path"], "HtoD.pinned.gpu0");
  EXPECT_EQ(row["kind"], "kernel host loads");
  EXPECT_EQ(row["kernels"], 1);
  EXPECT_EQ(row["bytes"], 1'000'000);
  EXPECT_EQ(row["bytes_are"], "bound");
}

// The page's times count from the trace's start (meta start_ns), which it names.
TEST_F(ReportData, TimesCountFromTheTracesStart) {
  trace.set_meta("start_ns", "4000");
  int64_t host = buffer(AllocKind::PinnedHost, 1000);
  int64_t device = buffer(AllocKind::Device, 1000);
  pinned_copy(host, device, 1000, 10'000);
  trace::Trace model(trace.db());
  nlohmann::json data = report_data(model, "t.db", "");
  EXPECT_EQ(data["overview"]["time_origin"], "times since the trace's start (meta start_ns 4000)");
  ASSERT_EQ(data["transfers"].size(), 1u);
  EXPECT_DOUBLE_EQ(data["transfers"][0]["start_ms"].get<double>(), (10'000 - 4000) / 1e6);
}

// From 1 ms, a pinned buffer allocated by a 5 ms call; then, after 8 ms of
// start-up, a copy and a kernel.
class FirstScreen : public ReportData {
 protected:
  static constexpr int64_t kStart = 1'000'000;
  static constexpr int64_t kWorkStart = kStart + 8'000'000;
  static constexpr int64_t kKernelNs = 50'000;
  FirstScreen() {
    testing::AllocationRow pinned;
    pinned.kind = AllocKind::PinnedHost;
    pinned.device = std::nullopt;
    pinned.address = 0x10000;
    pinned.bytes = 1'000'000;
    pinned.alloc_ns = kStart;
    pinned.alloc_correlation_id = call("cudaMallocHost", kStart, kStart + 5'000'000);
    int64_t host = trace.add(pinned);
    int64_t device = buffer(AllocKind::Device, 1'000'000, kStart);
    pinned_copy(host, device, 1'000'000, kWorkStart);
    kernel("work", kWorkStart + 200'000, kKernelNs, {{device, A::ReadWrite}});
  }
};

TEST_F(FirstScreen, SaysWhereTheTimeWentLargestFirst) {
  trace::Trace model(trace.db());
  nlohmann::json data = report_data(model, "t.db", "");
  std::vector<std::pair<std::string, int64_t>> rows;
  for (const auto& row : data["summary"]["time"])
    rows.emplace_back(row["what"].get<std::string>(), row["ns"].get<int64_t>());
  int64_t copy_ns = diagnose::pinned_ns(1'000'000);
  std::vector<std::pair<std::string, int64_t>> expected{
      {"start-up before the first GPU work", kWorkStart - kStart},
      {"allocating memory", 5'000'000},
      {"copies", copy_ns},
      {"GPU idle between its first and last work", 200'000 - copy_ns},
      {"kernels", kKernelNs}};
  EXPECT_EQ(rows, expected) << data["summary"]["time"].dump();
}

TEST_F(FirstScreen, TheTimelineStartsAtTheFirstGpuWork) {
  trace::Trace model(trace.db());
  nlohmann::json timeline = report_data(model, "t.db", "")["timeline"];
  EXPECT_DOUBLE_EQ(timeline["start_ms"].get<double>(), kWorkStart / 1e6);
  EXPECT_DOUBLE_EQ(timeline["end_ms"].get<double>(), (kWorkStart + 200'000 + kKernelNs) / 1e6);
  EXPECT_GE(timeline["trace_end_ms"].get<double>(), timeline["end_ms"].get<double>());
  ASSERT_EQ(timeline["lanes"].size(), 1u);
  EXPECT_EQ(timeline["lanes"][0]["lane"], "GPU 0 stream 7");
}

// The Perfetto timeline rides along, up to its limit.
TEST_F(FirstScreen, CarriesThePerfettoTimelineUpToALimit) {
  trace::Trace model(trace.db());
  std::optional<std::string> timeline = perfetto_timeline(model, kEmbeddedTimelineLimit);
  ASSERT_TRUE(timeline);
  EXPECT_GT(timeline->size(), 100u);
  EXPECT_FALSE(perfetto_timeline(model, timeline->size() - 1));
  nlohmann::json data = report_data(model, "t.db", "");
  EXPECT_EQ(data["perfetto"]["bytes"], timeline->size());
  EXPECT_EQ(data["perfetto"]["base64"], base64(*timeline));
}

TEST(Base64, Rfc4648Vectors) {
  EXPECT_EQ(base64(""), "");
  EXPECT_EQ(base64("f"), "Zg==");
  EXPECT_EQ(base64("fo"), "Zm8=");
  EXPECT_EQ(base64("foo"), "Zm9v");
  EXPECT_EQ(base64("foobar"), "Zm9vYmFy");
  EXPECT_EQ(base64(std::string("\xff\x00\xfe", 3)), "/wD+");
}

// A managed buffer the GPU faulted in: one 2 MiB migration to device 0.
TEST_F(ReportData, UnifiedMemoryMigrationsAreWorkAndBytesMoved) {
  int64_t managed = buffer(AllocKind::Managed, 2 << 20);
  testing::UmEventRow move;
  move.counter_kind = UmCounterKind::BytesHtoD;
  move.address = 0x7f0000000000;
  move.bytes = move.value = 2 << 20;
  move.alloc_id = managed;
  move.alloc_offset = 0;
  move.dst_device = 0;
  move.start_ns = 1'000'000;
  move.end_ns = 1'300'000;
  move.cause = static_cast<int64_t>(UmMigrationCause::Coherence);
  trace.add(move);
  trace::Trace model(trace.db());
  nlohmann::json data = report_data(model, "t.db", "");
  ASSERT_EQ(data["summary"]["paths"].size(), 1u) << data["summary"]["paths"].dump();
  const auto& path = data["summary"]["paths"][0];
  EXPECT_EQ(path["path"], "HtoD managed, device 0 (unified-memory migrations)");
  EXPECT_EQ(path["count"], 1);
  EXPECT_EQ(path["bytes"], 2 << 20);
  EXPECT_EQ(path["time_ns"], 300'000);
  EXPECT_EQ(data["summary"]["migrations"], 1);
  const auto& timeline = data["timeline"];
  ASSERT_EQ(timeline["lanes"].size(), 1u);
  EXPECT_EQ(timeline["lanes"][0]["lane"], "GPU 0 unified-memory migrations");
  EXPECT_EQ(timeline["lanes"][0]["bars"][0], (nlohmann::json{1.0, 1.3, "migration"}));
  EXPECT_DOUBLE_EQ(timeline["start_ms"].get<double>(), 1.0);
  EXPECT_EQ(data["summary"]["time"][0]["what"], "start-up before the first GPU work");
  EXPECT_EQ(data["summary"]["time"][1]["what"], "unified-memory migrations");
  EXPECT_EQ(data["summary"]["time"][1]["ns"], 300'000);
}

TEST_F(ReportData, TheGraphIsLimited) {
  int64_t host = buffer(AllocKind::PinnedHost, 1000);
  // Distinct buffers, so nothing folds as a repeated iteration.
  for (int i = 0; i < 450; ++i) pinned_copy(host, buffer(AllocKind::Device, 1000), 1000, 10'000 + i * 5'000);
  trace::Trace model(trace.db());
  nlohmann::json data = report_data(model, "t.db", "");
  EXPECT_EQ(data["dvdg"]["values"].size(), kGraphValueLimit);
  EXPECT_GT(data["dvdg"]["total_values"].get<size_t>(), kGraphValueLimit);
  for (const auto& edge : data["dvdg"]["edges"]) {
    EXPECT_TRUE(data["dvdg"]["ops"].contains(edge["op"].get<std::string>()));
  }
}

TEST_F(ReportData, WhatIfTablesAreShownAsTheyAre) {
  trace.db().exec("CREATE TABLE whatif_phases (phase TEXT, recorded_ns INTEGER, predicted_ns REAL);"
                  "INSERT INTO whatif_phases VALUES ('all', 1000, 812.5)");
  trace::Trace model(trace.db());
  nlohmann::json data = report_data(model, "t.db", "");
  const auto& stored = data["whatif"]["stored"];
  ASSERT_EQ(stored.size(), 1u);
  EXPECT_EQ(stored[0]["name"], "whatif_phases");
  EXPECT_EQ(stored[0]["columns"], (nlohmann::json{"phase", "recorded_ns", "predicted_ns"}));
  EXPECT_EQ(stored[0]["rows"][0], (nlohmann::json{"all", 1000, 812.5}));
}

// Only the tables whatif declares: a view of another whatif name could run
// anything (a recursive query without end).
TEST_F(ReportData, OnlyDeclaredWhatIfTablesAreRead) {
  trace.db().exec("CREATE VIEW whatif_crafted AS SELECT 1 AS x");
  trace::Trace model(trace.db());
  nlohmann::json data = report_data(model, "t.db", "");
  EXPECT_TRUE(data["whatif"]["stored"].empty()) << data["whatif"];
}

// --compare: `apptracer diff`'s notes and tables, every one, for the page.
TEST(ReportComparison, CarriesDiffsNotesAndTables) {
  testing::ScratchDir dir;
  for (int64_t device : {0, 1}) {
    testing::TraceBuilder run(dir / ("gpu" + std::to_string(device) + ".db"));
    testing::MemcpyRow copy;
    copy.dst_device = device;
    copy.bytes = 4096;
    copy.gpu_start_ns = 1000;
    copy.gpu_end_ns = 2000 + 1000 * device;
    run.add(copy);
  }
  diff::TraceComparison comparison = diff::compare_traces(dir / "gpu0.db", dir / "gpu1.db", {});
  nlohmann::json data = comparison_data("gpu0.db", "gpu1.db", comparison);
  EXPECT_EQ(data["a"], "gpu0.db");
  EXPECT_EQ(data["b"], "gpu1.db");
  ASSERT_EQ(data["notes"].size(), 1u);
  EXPECT_NE(data["notes"][0].get<std::string>().find("devices:"), std::string::npos);
  std::vector<std::string> names;
  for (const auto& table : data["tables"]) names.push_back(table["name"]);
  EXPECT_EQ(names, (std::vector<std::string>{"operations", "nvtx_ranges", "dvdg"}));
  const auto& operations = data["tables"][0];
  EXPECT_EQ(operations["columns"], comparison.tables[0].columns);
  ASSERT_EQ(operations["rows"].size(), 1u);
  EXPECT_EQ(operations["rows"][0][1], "HtoD pageable->device gpu");
  EXPECT_EQ(operations["rows"][0][2], "changed");
}

// Steps 1-4: NVTX ranges "step k" of 1 ms from k ms, each issuing a pinned
// copy of 1000 bytes and two kernels (200 us and 100 us); before them, 12
// allocations never used, each made by its own call.
class SteadyState : public ReportData {
 protected:
  SteadyState() {
    int64_t host = buffer(AllocKind::PinnedHost, 1'000'000);
    int64_t device = buffer(AllocKind::Device, 1'000'000);
    for (int64_t i = 0; i < 12; ++i) allocated_by("cudaMalloc", AllocKind::Device, (i + 1) << 20, 100'000 + i * 60'000);
    for (int64_t k = 1; k <= 4; ++k) {
      int64_t start = k * 1'000'000;
      testing::NvtxRangeRow range;
      range.name = "step " + std::to_string(k);
      range.start_ns = start;
      range.end_ns = start + 1'000'000;
      trace.add(range);
      pinned_copy(host, device, 1000, start + 10'000);
      kernel("forward", start + 100'000, 200'000, {{device, A::ReadWrite}});
      kernel("backward", start + 400'000, 100'000, {{device, A::ReadWrite}});
    }
  }
};

TEST_F(SteadyState, TheFirstScreenIsTheSteadyStep) {
  trace::Trace model(trace.db());
  nlohmann::json step = report_data(model, "t.db", "")["step"];
  ASSERT_TRUE(step["found"].get<bool>()) << step.dump();
  ASSERT_EQ(step["processes"].size(), 1u);
  const auto& p = step["processes"][0];
  EXPECT_EQ(p["steps"], 4);
  EXPECT_EQ(p["steady_steps"], 4);
  EXPECT_EQ(p["median_wall_ns"], 1'000'000);
  EXPECT_EQ(p["median_gpu_busy_ns"], 300'000 + diagnose::pinned_ns(1000));
  EXPECT_DOUBLE_EQ(p["gpu_busy_pct"].get<double>(), 100.0 * (300'000 + diagnose::pinned_ns(1000)) / 1'000'000);
  EXPECT_EQ(p["launches"], 2.0);
  EXPECT_EQ(p["copies"], 1.0);
  EXPECT_EQ(p["memsets"], 0.0);
  EXPECT_NE(p["found_from"].get<std::string>().find("NVTX"), std::string::npos) << p["found_from"];
}

// --steps 2-3: every section is those steps', as diagnose's findings are.
TEST_F(SteadyState, ChosenStepsLimitEverySection) {
  trace::Trace model(trace.db());
  trace::StepSelection steps{std::make_pair(int64_t{2}, int64_t{3}), false};
  nlohmann::json data = report_data(model, "t.db", "", steps);
  int64_t launches = 0;
  for (const nlohmann::json& kernel : data["kernels"]) launches += kernel["count"].get<int64_t>();
  EXPECT_EQ(launches, 4) << data["kernels"].dump();  // two steps of two kernels
  EXPECT_DOUBLE_EQ(data["timeline"]["start_ms"].get<double>(), 2.0) << data["timeline"].dump();
  EXPECT_DOUBLE_EQ(data["timeline"]["end_ms"].get<double>(), 4.0) << data["timeline"].dump();
  trace::Trace diagnosed(trace.db());
  diagnose::DiagnosisRequest request;
  request.steps = steps;
  std::vector<diagnose::Finding> expected = diagnose::diagnose_trace(diagnosed, request).findings;
  EXPECT_EQ(data["findings"].size() + data["more_findings"].size(), expected.size());
  std::string notes = data["diagnosis_notes"].dump();
  EXPECT_NE(notes.find("steps 2-3"), std::string::npos) << notes;
  trace::Trace whole(trace.db());
  int64_t all = 0;
  nlohmann::json whole_data = report_data(whole, "t.db", "");
  for (const nlohmann::json& kernel : whole_data["kernels"]) all += kernel["count"].get<int64_t>();
  EXPECT_EQ(all, 8) << whole_data["kernels"].dump();
}

// The findings `apptracer diagnose` shows by default, in its order and with
// its savings (the steady steps'); the rest apart. Beside each whole kernel
// name, the short one the page shows (as diagnose's text does).
TEST_F(SteadyState, FindingsAreDiagnosesDefaultList) {
  trace::Trace diagnosed(trace.db());
  std::vector<diagnose::Finding> expected = diagnose::diagnose_trace(diagnosed, {}).findings;
  ASSERT_GT(expected.size(), diagnose::kShownFindings) << "the trace should have more findings than are shown";
  trace::Trace model(trace.db());
  nlohmann::json data = report_data(model, "t.db", "");
  nlohmann::json shown = data["findings"];
  for (nlohmann::json& f : shown) {
    const nlohmann::json& names = f["where"]["names"];
    ASSERT_EQ(f["where"]["short_names"].size(), names.size());
    for (size_t i = 0; i < names.size(); ++i)
      EXPECT_EQ(f["where"]["short_names"][i], trace::short_kernel_name(names[i].get<std::string>()));
    f["where"].erase("short_names");
    if (f["details"].is_null()) continue;
    EXPECT_EQ(f["details"]["short_rows"].size(), f["details"]["rows"].size());
    f["details"].erase("short_rows");
  }
  EXPECT_EQ(shown, diagnose::findings_json(expected, diagnose::kShownFindings));
  EXPECT_EQ(data["more_findings"].size(), expected.size() - diagnose::kShownFindings);
  EXPECT_EQ(data["more_findings"][0]["what"], expected[diagnose::kShownFindings].what);
  EXPECT_FALSE(data["diagnosis_notes"].empty());
}

// The page shows kernel names as diagnose's text does, template arguments
// elided; the whole names stay beside them.
TEST(FindingsToShow, KernelNamesShortenedBesideTheWholeOnes) {
  std::string name = "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<int>, "
                     "std::array<char*, 1ul> >(int, at::native::FillFunctor<int>, std::array<char*, 1ul>)";
  diagnose::Finding f;
  f.rule = "launch_bound_kernels";
  f.names = {name};
  f.details = {"kernels", {"kernel", "launches"}, {{name, int64_t{3}}}};
  nlohmann::json shown = findings_to_show(diagnose::findings_json({f}));
  std::string short_name = trace::short_kernel_name(name);
  EXPECT_EQ(short_name, "at::native::vectorized_elementwise_kernel<FillFunctor<int>>");
  EXPECT_EQ(shown[0]["where"]["short_names"][0], short_name);
  EXPECT_EQ(shown[0]["where"]["names"][0], name);
  EXPECT_EQ(shown[0]["details"]["short_rows"][0], nlohmann::json::array({short_name, 3}));
  EXPECT_EQ(shown[0]["details"]["rows"][0][0], name);
  // Two kernels the short name cannot tell apart are numbered, as in the text.
  f.details.rows.push_back({name + "2", int64_t{1}});
  shown = findings_to_show(diagnose::findings_json({f}));
  EXPECT_EQ(shown[0]["details"]["short_rows"][1], nlohmann::json::array({short_name + " [2]", 1}));
}

// The timeline shows the steady steps, not what came before them.
TEST_F(SteadyState, TheTimelineShowsTheSteadySteps) {
  trace::Trace model(trace.db());
  nlohmann::json timeline = report_data(model, "t.db", "")["timeline"];
  EXPECT_TRUE(timeline["steady_steps"].get<bool>());
  EXPECT_DOUBLE_EQ(timeline["start_ms"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(timeline["end_ms"].get<double>(), 5.0);
}

// Without steps, the whole run and why no steps were found.
TEST_F(FirstScreen, WithoutStepsTheFirstScreenIsTheWholeRun) {
  trace::Trace model(trace.db());
  nlohmann::json data = report_data(model, "t.db", "");
  const auto& step = data["step"];
  EXPECT_FALSE(step["found"].get<bool>());
  EXPECT_NE(step["why"].get<std::string>().find("no steps"), std::string::npos) << step["why"];
  EXPECT_EQ(step["launches"], 1);
  EXPECT_EQ(step["copies"], 1);
  EXPECT_EQ(step["span_ns"], data["summary"]["span_ns"]);
}

// A path's achieved bandwidth above its peak says why: a pageable copy's GPU
// time is only the DMA out of the staging buffer.
TEST_F(ReportData, BandwidthAboveThePeakIsExplained) {
  int64_t host = buffer(AllocKind::PageableHost, 1 << 20);
  int64_t pinned = buffer(AllocKind::PinnedHost, 1 << 20);
  int64_t device = buffer(AllocKind::Device, 1 << 20);
  copy(CopyKind::HtoD, host, device, 1 << 20, 10'000, (1 << 20) / 50, MemoryKind::Pageable, false);  // 50 GB/s
  copy(CopyKind::HtoD, pinned, device, 1 << 20, 100'000, (1 << 20) / 10);                             // 10 GB/s
  testing::ScratchDir dir;
  std::string system = write_system(dir);  // pageable 5 GB/s, pinned 20 GB/s
  trace::Trace model(trace.db());
  nlohmann::json data = report_data(model, "t.db", system);
  std::map<std::string, std::string> reasons;
  for (const auto& path : data["summary"]["paths"]) reasons[path["path"]] = path["above_peak"];
  EXPECT_EQ(reasons["HtoD pinned, device 0"], "");
  EXPECT_NE(reasons["HtoD pageable, device 0"].find("staged through the driver's pinned buffer"), std::string::npos) << data["summary"]["paths"].dump();
  for (const auto& copy : data["transfers"]) EXPECT_EQ(copy["above_peak"] == "", copy["path"] == "HtoD pinned, device 0");
}

// Copy bandwidth's typical rate is over the copies' busy time (the rate they
// ran at or below for 95% of it), not over time bins of the whole trace.
TEST_F(ReportData, CopyBandwidthIsAQuantileOverBusyTime) {
  int64_t host = buffer(AllocKind::PinnedHost, 1 << 20);
  int64_t device = buffer(AllocKind::Device, 1 << 20);
  copy(CopyKind::HtoD, host, device, 1'000'000, 1'000'000, 100'000);         // 10 GB/s for 100 us
  copy(CopyKind::HtoD, host, device, 4'000, 900'000'000, 1'000);            // 4 GB/s for 1 us
  trace::Trace model(trace.db());
  nlohmann::json data = report_data(model, "t.db", "");
  const nlohmann::json* bandwidth = nullptr;
  for (const auto& table : data["analyses"]) {
    if (table["name"] == "memory_bandwidth") bandwidth = &table;
  }
  ASSERT_NE(bandwidth, nullptr);
  EXPECT_EQ((*bandwidth)["columns"].back(), "p95_gbps_over_busy_time");
  ASSERT_EQ((*bandwidth)["rows"].size(), 1u);
  const auto& row = (*bandwidth)["rows"][0];
  EXPECT_DOUBLE_EQ(row[4].get<double>(), 1'004'000.0 / 101'000);  // mean: bytes over GPU time
  EXPECT_DOUBLE_EQ(row[5].get<double>(), 10.0);
}

// Memory over time by owner, its peak, and what was live then.
TEST_F(ReportData, MemoryByOwnerWithTheLiveSetAtThePeak) {
  int64_t host = buffer(AllocKind::PinnedHost, 4096);
  int64_t early = buffer(AllocKind::Device, 3 << 20, 1'000);
  int64_t late = buffer(AllocKind::Device, 1 << 20, 50'000);
  Statement freed = trace.db().prepare("UPDATE allocations SET free_ns = 90000 WHERE id = ?");
  freed.bind(1, late).run();
  pinned_copy(host, early, 4096, 60'000);
  kernel("fill", 70'000, 10'000, {{late, A::Write}});
  trace::Trace model(trace.db());
  nlohmann::json memory = report_data(model, "t.db", "")["memory"];
  ASSERT_EQ(memory["devices"].size(), 2u) << memory.dump();
  const auto& gpu = memory["devices"][0];
  EXPECT_EQ(gpu["device"], "GPU 0");
  EXPECT_EQ(gpu["peak_bytes"], 4 << 20);
  EXPECT_DOUBLE_EQ(gpu["peak_ms"].get<double>(), 0.05);
  EXPECT_EQ(gpu["owners"], (nlohmann::json{"program"}));
  // In use after each change: the first allocation, both, the first again.
  EXPECT_EQ(gpu["bytes"][0], (nlohmann::json{3 << 20, 4 << 20, 3 << 20}));
  ASSERT_EQ(gpu["live"].size(), 2u);
  EXPECT_EQ(gpu["live"][0]["bytes"], 3 << 20);
  EXPECT_EQ(gpu["live"][0]["producer"], "HtoD copy");
  EXPECT_DOUBLE_EQ(gpu["live"][0]["first_use_ms"].get<double>(), 0.06);
  EXPECT_EQ(gpu["live"][1]["producer"], "fill");  // shortened: `stats --report memory` has "fill()"
  EXPECT_DOUBLE_EQ(gpu["live"][1]["freed_ms"].get<double>(), 0.09);
  EXPECT_EQ(memory["devices"][1]["device"], "host");
}

// With a system file, the what-if section is the trace replayed on that
// machine as recorded and with the usual changes, each with whatif's tables.
TEST_F(ReportData, WhatIfRunsWithASystemFile) {
  int64_t host = buffer(AllocKind::PageableHost, 1 << 20);
  int64_t device = buffer(AllocKind::Device, 1 << 20);
  copy(CopyKind::HtoD, host, device, 1 << 20, 10'000, 200'000, MemoryKind::Pageable, false);
  kernel("work", 300'000, 50'000, {{device, A::ReadWrite}});
  testing::ScratchDir dir;
  std::string system = write_system(dir);
  trace::Trace model(trace.db());
  nlohmann::json runs = report_data(model, "t.db", system)["whatif"]["runs"];
  ASSERT_FALSE(runs.is_null());
  std::vector<std::string> changes;
  for (const auto& run : runs["scenarios"]) {
    ASSERT_FALSE(run.contains("error")) << run.dump();
    changes.push_back(run["changes"]);
    EXPECT_FALSE(run["tables"].empty());
  }
  EXPECT_EQ(changes, (std::vector<std::string>{"", "--pin", "--overlap", "--pin --overlap"}));
  const auto& baseline = runs["scenarios"][0];
  const auto& pinned = runs["scenarios"][1];
  EXPECT_EQ(baseline["predicted_ns"], baseline["baseline_ns"]);
  // Pinned, the copy goes at 20 GB/s instead of 5.
  EXPECT_LT(pinned["predicted_ns"].get<int64_t>(), baseline["predicted_ns"].get<int64_t>());
}

// A PyTorch trace's pinned scenarios are its fix whole: pin_memory=True with
// non_blocking=True (whatif --pin --non-blocking).
TEST_F(ReportData, APyTorchTracesPinnedScenariosAreNonBlocking) {
  int64_t host = buffer(AllocKind::PageableHost, 1 << 20);
  int64_t device = buffer(AllocKind::Device, 1 << 20);
  copy(CopyKind::HtoD, host, device, 1 << 20, 10'000, 200'000, MemoryKind::Pageable, false);
  kernel("work", 300'000, 50'000, {{device, A::ReadWrite}});
  trace.add_block(device, 0, 4096, 0);  // a block of PyTorch's caching allocator
  testing::ScratchDir dir;
  std::string system = write_system(dir);
  trace::Trace model(trace.db());
  nlohmann::json runs = report_data(model, "t.db", system)["whatif"]["runs"];
  std::vector<std::string> changes;
  for (const auto& run : runs["scenarios"]) changes.push_back(run["changes"]);
  EXPECT_EQ(changes, (std::vector<std::string>{"", "--pin --non-blocking", "--overlap",
                                               "--pin --overlap --non-blocking"}));
}

// --compare shows only what changed beyond the threshold: run-to-run noise
// (1%) and unchanged rows are left out and counted.
TEST(ReportComparison, ShowsOnlyWhatChanged) {
  testing::ScratchDir dir;
  auto write = [&](const std::string& name, int64_t steady_ns, int64_t slower_ns, bool added) {
    testing::TraceBuilder run(dir / name);
    int64_t at = 1000;
    auto launch = [&](const std::string& kernel, int64_t ns) {
      testing::KernelRow row;
      row.demangled_name = kernel;
      row.gpu_start_ns = at;
      row.gpu_end_ns = at + ns;
      at += ns + 1000;
      run.add(row);
    };
    launch("steady", steady_ns);
    launch("slower", slower_ns);
    launch("same", 50'000);
    if (added) launch("added", 30'000);
  };
  write("a.db", 100'000, 100'000, false);
  write("b.db", 101'000, 200'000, true);
  diff::TraceComparison comparison = diff::compare_traces(dir / "a.db", dir / "b.db", {});
  nlohmann::json data = comparison_data("a.db", "b.db", comparison);
  const auto& operations = data["tables"][0];
  ASSERT_EQ(operations["name"], "operations");
  std::vector<std::string> shown;
  for (const auto& row : operations["rows"]) shown.push_back(row[1]);
  EXPECT_EQ(shown, (std::vector<std::string>{"slower", "added"}));
  EXPECT_EQ(operations["unchanged"], 2);
  EXPECT_EQ(data["threshold_pct"], 100 * kChangeThreshold);
}

TEST(ReportPage, InlineDataCannotCloseItsScript) {
  nlohmann::json data = {{"name", "</script><script>alert(1)</script>"}};
  std::string page = report_html(data, "a<b>.db");
  EXPECT_EQ(page.find("</script><script>alert"), std::string::npos);
  EXPECT_NE(page.find("<\\/script><script>alert(1)<\\/script>"), std::string::npos);
  EXPECT_NE(page.find("<title>apptracer report: a&lt;b&gt;.db</title>"), std::string::npos);
  // Self-contained: nothing is fetched.
  EXPECT_EQ(page.find("<script src"), std::string::npos);
  EXPECT_EQ(page.find("<link"), std::string::npos);
}

}  // namespace
}  // namespace apptracer::report
