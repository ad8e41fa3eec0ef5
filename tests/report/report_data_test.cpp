// What `apptracer report` puts in the page: the sections' data from a
// synthetic trace (where the time went, the timeline over the program's work,
// unified-memory migrations), the graph limit, what-if tables when present,
// the comparison with another trace, and a page whose inline data cannot end
// its <script> early.
#include <gtest/gtest.h>

#include "diagnose_fixture.h"
#include "analyzer/report/perfetto_embed.h"
#include "analyzer/report/report_data.h"
#include "analyzer/report/report_page.h"
#include "scratch_dir.h"

namespace apptracer::report {
namespace {

using A = AccessKind;

class ReportData : public diagnose::DiagnoseTest {};

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
  EXPECT_TRUE(data["whatif"].empty());
  EXPECT_EQ(data["analyses"].size(), 8u);
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
  ASSERT_EQ(data["whatif"].size(), 1u);
  EXPECT_EQ(data["whatif"][0]["name"], "whatif_phases");
  EXPECT_EQ(data["whatif"][0]["columns"], (nlohmann::json{"phase", "recorded_ns", "predicted_ns"}));
  EXPECT_EQ(data["whatif"][0]["rows"][0], (nlohmann::json{"all", 1000, 812.5}));
}

// Only the tables whatif declares: a view of another whatif name could run
// anything (a recursive query without end).
TEST_F(ReportData, OnlyDeclaredWhatIfTablesAreRead) {
  trace.db().exec("CREATE VIEW whatif_crafted AS SELECT 1 AS x");
  trace::Trace model(trace.db());
  nlohmann::json data = report_data(model, "t.db", "");
  EXPECT_TRUE(data["whatif"].empty()) << data["whatif"];
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
