// Every stats report on the sample trace, checked against numbers computed by
// hand from the rows in sample_trace.cpp.
#include <gtest/gtest.h>

#include "report_test_helpers.h"
#include "sample_trace.h"
#include "analyzer/stats/stats_reports.h"

namespace apptracer::testing {
namespace {

class StatsReports : public ::testing::Test {
 protected:
  void SetUp() override { build_sample_trace(builder_); }
  TraceBuilder builder_;
};

TEST_F(StatsReports, ProcessesSummarizeTheWholeTrace) {
  Table table = run_report(processes_report, builder_.db());
  ASSERT_EQ(table.rows.size(), 1u);
  EXPECT_EQ(integer(table, 0, "pid"), 4242);
  EXPECT_EQ(text(table, 0, "program"), "vector_add");
  EXPECT_EQ(text(table, 0, "status"), "complete");
  // 500+300+1000+100+100+100+50+800+500+60+100+500 ns of API calls.
  EXPECT_EQ(integer(table, 0, "api_calls"), 12);
  EXPECT_EQ(integer(table, 0, "api_ns"), 4110);
  // 1000+300+200+200 ns of kernels; the lost one adds nothing.
  EXPECT_EQ(integer(table, 0, "kernels"), 5);
  EXPECT_EQ(integer(table, 0, "kernel_ns"), 1700);
  EXPECT_EQ(integer(table, 0, "copies"), 3);
  EXPECT_EQ(integer(table, 0, "copy_bytes"), 17000);
  // 800+500+300+100 ns blocked.
  EXPECT_EQ(integer(table, 0, "sync_ns"), 1700);
}

TEST_F(StatsReports, ApiCallsPerFunctionSortedByTotalTime) {
  Table table = run_report(api_calls_report, builder_.db());
  ASSERT_EQ(table.rows.size(), 8u);
  // Totals 1500, 800, 800, 500, 300, 100, 60, 50; the two 800s in name order.
  const char* names[] = {"cudaMemcpy",       "cudaDeviceSynchronize", "cudaMalloc",
                         "cudaStreamSynchronize", "cudaLaunchKernel", "cudaFree",
                         "cuLaunchKernel",   "cudaMemsetAsync"};
  for (size_t i = 0; i < 8; ++i) EXPECT_EQ(text(table, i, "name"), names[i]);
  // cudaMemcpy: 1000 and 500 ns.
  EXPECT_EQ(text(table, 0, "domain"), "runtime");
  EXPECT_EQ(integer(table, 0, "count"), 2);
  EXPECT_EQ(integer(table, 0, "total_ns"), 1500);
  EXPECT_EQ(integer(table, 0, "min_ns"), 500);
  EXPECT_DOUBLE_EQ(real(table, 0, "median_ns"), 750.0);
  EXPECT_EQ(integer(table, 0, "max_ns"), 1000);
  // cudaMalloc: 500 and 300 ns.
  EXPECT_EQ(integer(table, 2, "total_ns"), 800);
  EXPECT_DOUBLE_EQ(real(table, 2, "median_ns"), 400.0);
  // cudaLaunchKernel: three calls of 100 ns on two threads.
  EXPECT_EQ(integer(table, 4, "count"), 3);
  EXPECT_EQ(integer(table, 4, "total_ns"), 300);
  EXPECT_DOUBLE_EQ(real(table, 4, "median_ns"), 100.0);
  // The driver call under the first launch is its own row, in its own domain.
  EXPECT_EQ(text(table, 6, "domain"), "driver");
  EXPECT_EQ(integer(table, 6, "total_ns"), 60);
}

TEST_F(StatsReports, KernelsByDemangledNameWithLostRecordsUntimed) {
  Table table = run_report(kernels_report, builder_.db());
  ASSERT_EQ(table.rows.size(), 3u);
  // vec_add: 1000 + 300 ns on two streams.
  EXPECT_EQ(text(table, 0, "name"), "vec_add(float*, float*)");
  EXPECT_EQ(integer(table, 0, "count"), 2);
  EXPECT_EQ(integer(table, 0, "total_ns"), 1300);
  EXPECT_EQ(integer(table, 0, "min_ns"), 300);
  EXPECT_DOUBLE_EQ(real(table, 0, "median_ns"), 650.0);
  EXPECT_EQ(integer(table, 0, "max_ns"), 1000);
  EXPECT_EQ(integer(table, 0, "untimed"), 0);
  // overlap: 200 + 200 ns.
  EXPECT_EQ(text(table, 1, "name"), "overlap()");
  EXPECT_EQ(integer(table, 1, "total_ns"), 400);
  EXPECT_DOUBLE_EQ(real(table, 1, "median_ns"), 200.0);
  // No demangled name: the mangled one; no GPU record: untimed, no times.
  EXPECT_EQ(text(table, 2, "name"), "_Z5scalePf");
  EXPECT_EQ(integer(table, 2, "count"), 1);
  EXPECT_EQ(integer(table, 2, "total_ns"), 0);
  EXPECT_TRUE(is_null(table, 2, "min_ns"));
  EXPECT_TRUE(is_null(table, 2, "median_ns"));
  EXPECT_TRUE(is_null(table, 2, "max_ns"));
  EXPECT_EQ(integer(table, 2, "untimed"), 1);
}

TEST_F(StatsReports, CopiesByKindAndMemoryWithAchievedBandwidth) {
  Table table = run_report(copies_report, builder_.db());
  ASSERT_EQ(table.rows.size(), 3u);
  // HtoD pageable -> device: 5000 B in 500 ns = 10 GB/s.
  EXPECT_EQ(text(table, 0, "kind"), "HtoD");
  EXPECT_EQ(text(table, 0, "src_memory"), "pageable");
  EXPECT_EQ(text(table, 0, "dst_memory"), "device");
  EXPECT_EQ(integer(table, 0, "count"), 1);
  EXPECT_EQ(integer(table, 0, "bytes"), 5000);
  EXPECT_EQ(integer(table, 0, "time_ns"), 500);
  EXPECT_DOUBLE_EQ(real(table, 0, "bandwidth_gbps"), 10.0);
  EXPECT_EQ(integer(table, 0, "untimed"), 0);
  // HtoD pinned -> device: 8000 B, record lost: no time, no bandwidth.
  EXPECT_EQ(text(table, 1, "src_memory"), "pinned");
  EXPECT_EQ(integer(table, 1, "bytes"), 8000);
  EXPECT_EQ(integer(table, 1, "time_ns"), 0);
  EXPECT_TRUE(is_null(table, 1, "bandwidth_gbps"));
  EXPECT_EQ(integer(table, 1, "untimed"), 1);
  // DtoH device -> pageable: 4000 B in 200 ns = 20 GB/s.
  EXPECT_EQ(text(table, 2, "kind"), "DtoH");
  EXPECT_EQ(integer(table, 2, "bytes"), 4000);
  EXPECT_EQ(integer(table, 2, "time_ns"), 200);
  EXPECT_DOUBLE_EQ(real(table, 2, "bandwidth_gbps"), 20.0);
}

TEST_F(StatsReports, MemsetsByMemoryKind) {
  Table table = run_report(memsets_report, builder_.db());
  ASSERT_EQ(table.rows.size(), 1u);
  // 4096 + 904 = 5000 B in 100 + 100 ns = 25 GB/s.
  EXPECT_EQ(text(table, 0, "memory"), "device");
  EXPECT_EQ(integer(table, 0, "count"), 2);
  EXPECT_EQ(integer(table, 0, "bytes"), 5000);
  EXPECT_EQ(integer(table, 0, "time_ns"), 200);
  EXPECT_DOUBLE_EQ(real(table, 0, "bandwidth_gbps"), 25.0);
}

TEST_F(StatsReports, AllocationsWithPeakLiveBytesPerPlace) {
  Table table = run_report(allocations_report, builder_.db());
  ASSERT_EQ(table.rows.size(), 7u);
  // Host: pinned 500 B [100, 200), pageable 700 B from 150, registered 700 B
  // from 160 (the pageable memory again, so not in "all").
  EXPECT_EQ(text(table, 0, "place"), "host");
  EXPECT_EQ(text(table, 0, "kind"), "pinned host");
  EXPECT_EQ(integer(table, 0, "peak_live_bytes"), 500);
  EXPECT_EQ(integer(table, 0, "live_at_end_bytes"), 0);
  EXPECT_EQ(text(table, 1, "kind"), "registered host");
  EXPECT_EQ(text(table, 2, "kind"), "pageable host");
  EXPECT_EQ(integer(table, 2, "live_at_end_bytes"), 700);
  EXPECT_EQ(text(table, 3, "kind"), "all");
  EXPECT_EQ(integer(table, 3, "count"), 2);
  EXPECT_EQ(integer(table, 3, "bytes"), 1200);
  EXPECT_EQ(integer(table, 3, "peak_live_bytes"), 1200);  // at 150, before the pinned free
  EXPECT_EQ(integer(table, 3, "live_at_end_bytes"), 700);
  // Device 0: device memory 1000 B [1500, 5400), 3000 B from 1900, 2000 B
  // [5400, 6000): the free at 5400 comes before the allocation, so the peak
  // is 3000 + 2000 = 5000, not 6000.
  EXPECT_EQ(text(table, 4, "place"), "device 0");
  EXPECT_EQ(text(table, 4, "kind"), "device");
  EXPECT_EQ(integer(table, 4, "count"), 3);
  EXPECT_EQ(integer(table, 4, "bytes"), 6000);
  EXPECT_EQ(integer(table, 4, "peak_live_bytes"), 5000);
  EXPECT_EQ(integer(table, 4, "live_at_end_bytes"), 3000);
  EXPECT_EQ(text(table, 5, "kind"), "managed");
  EXPECT_EQ(integer(table, 5, "peak_live_bytes"), 4000);
  // With the managed 4000 B [2000, 3000): 1000 + 3000 + 4000 = 8000 at 2000.
  EXPECT_EQ(text(table, 6, "kind"), "all");
  EXPECT_EQ(integer(table, 6, "count"), 4);
  EXPECT_EQ(integer(table, 6, "bytes"), 10000);
  EXPECT_EQ(integer(table, 6, "peak_live_bytes"), 8000);
  EXPECT_EQ(integer(table, 6, "live_at_end_bytes"), 3000);
}

TEST_F(StatsReports, MemoryTimelineListsBytesInUsePerGpuAtEachChange) {
  Table table = run_report(memory_timeline_report, builder_.db());
  // The device allocations above and the managed one; at 5400 a free and an
  // allocation make one row.
  const int64_t times[] = {1500, 1900, 2000, 3000, 5400, 6000};
  const int64_t bytes[] = {1000, 4000, 8000, 4000, 5000, 3000};
  ASSERT_EQ(table.rows.size(), 6u);
  for (size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(integer(table, i, "pid"), 4242);
    EXPECT_EQ(text(table, i, "series"), "GPU 0 memory allocated");
    EXPECT_EQ(integer(table, i, "time_ns"), times[i]);
    EXPECT_EQ(integer(table, i, "bytes"), bytes[i]);
  }
}

TEST_F(StatsReports, SyncsByKindWithHostTimeBlocked) {
  Table table = run_report(syncs_report, builder_.db());
  ASSERT_EQ(table.rows.size(), 3u);
  // Device: 800 and 100 ns.
  EXPECT_EQ(text(table, 0, "kind"), "device");
  EXPECT_EQ(integer(table, 0, "count"), 2);
  EXPECT_EQ(integer(table, 0, "total_ns"), 900);
  EXPECT_EQ(integer(table, 0, "min_ns"), 100);
  EXPECT_DOUBLE_EQ(real(table, 0, "median_ns"), 450.0);
  EXPECT_EQ(integer(table, 0, "max_ns"), 800);
  EXPECT_EQ(text(table, 1, "kind"), "stream");
  EXPECT_EQ(integer(table, 1, "total_ns"), 500);
  EXPECT_EQ(text(table, 2, "kind"), "event");
  EXPECT_EQ(integer(table, 2, "total_ns"), 300);
}

TEST_F(StatsReports, StreamBusyTimeIsTheUnionOfGpuIntervals) {
  Table table = run_report(streams_report, builder_.db());
  ASSERT_EQ(table.rows.size(), 3u);
  // Stream 7: copies [2100,2600] [4800,5000] (+1 untimed), kernel [3300,4300]
  // (+1 untimed), memset [4400,4500]: busy 500+1000+100+200 = 1800 of 2900.
  EXPECT_EQ(integer(table, 0, "device"), 0);
  EXPECT_EQ(integer(table, 0, "stream"), 7);
  EXPECT_EQ(integer(table, 0, "kernels"), 2);
  EXPECT_EQ(integer(table, 0, "copies"), 3);
  EXPECT_EQ(integer(table, 0, "memsets"), 1);
  EXPECT_EQ(integer(table, 0, "busy_ns"), 1800);
  EXPECT_EQ(integer(table, 0, "span_ns"), 2900);
  EXPECT_DOUBLE_EQ(real(table, 0, "busy_pct"), 100.0 * 1800 / 2900);
  // Stream 8: kernel [3400,3700], memset [6000,6100]: 400 of 2700.
  EXPECT_EQ(integer(table, 1, "stream"), 8);
  EXPECT_EQ(integer(table, 1, "busy_ns"), 400);
  EXPECT_EQ(integer(table, 1, "span_ns"), 2700);
  // Stream 9: [100,300] and [200,400] overlap: busy 300, not 400.
  EXPECT_EQ(integer(table, 2, "stream"), 9);
  EXPECT_EQ(integer(table, 2, "busy_ns"), 300);
  EXPECT_DOUBLE_EQ(real(table, 2, "busy_pct"), 100.0);
}

TEST_F(StatsReports, BuffersListTheAllocationsGpuWorkUsed) {
  Table table = run_report(buffers_report, builder_.db());
  // Only the kernel's input (copied in) and output (copied out) were used.
  ASSERT_EQ(table.rows.size(), 2u);
  EXPECT_EQ(integer(table, 0, "allocation"), 1);
  EXPECT_EQ(text(table, 0, "place"), "device 0");
  EXPECT_EQ(integer(table, 0, "kernels"), 1);
  EXPECT_EQ(integer(table, 0, "copies_in"), 1);
  EXPECT_EQ(integer(table, 0, "bytes_in"), 5000);
  EXPECT_EQ(integer(table, 0, "copies_out"), 0);
  // Two arguments point into the output: still one kernel.
  EXPECT_EQ(integer(table, 1, "allocation"), 2);
  EXPECT_EQ(integer(table, 1, "kernels"), 1);
  EXPECT_EQ(integer(table, 1, "copies_out"), 1);
  EXPECT_EQ(integer(table, 1, "bytes_out"), 4000);
}

TEST(StatsReportsBuffers, CountsEveryUseOfEveryAllocation) {
  TraceBuilder builder;
  AllocationRow device;
  device.bytes = 4096;
  int64_t a = builder.add(device);
  int64_t b = builder.add(device);
  builder.add(device);  // never used: not listed
  AllocationRow pinned;
  pinned.kind = AllocKind::PinnedHost;
  pinned.device.reset();
  pinned.bytes = 4096;
  int64_t c = builder.add(pinned);
  MemcpyRow htod;
  htod.bytes = 4096;
  htod.src_alloc_id = c;
  htod.dst_alloc_id = a;
  builder.add(htod);
  builder.add(htod);
  MemcpyRow dtoh;
  dtoh.kind = CopyKind::DtoH;
  dtoh.bytes = 1024;
  dtoh.src_alloc_id = a;
  dtoh.dst_alloc_id = c;
  builder.add(dtoh);
  MemsetRow fill;
  fill.bytes = 4096;
  fill.alloc_id = b;
  builder.add(fill);
  int64_t first = builder.add(KernelRow{});
  int64_t second = builder.add(KernelRow{});
  for (auto [kernel, alloc] : {std::pair{first, a}, {first, b}, {first, b}, {second, b}}) {
    KernelArgRow arg;
    arg.kernel_id = kernel;
    arg.alloc_id = alloc;
    builder.add(arg);
  }
  Table table = run_report(buffers_report, builder.db());
  ASSERT_EQ(table.rows.size(), 3u);
  EXPECT_EQ(integer(table, 0, "allocation"), a);
  EXPECT_EQ(integer(table, 0, "kernels"), 1);
  EXPECT_EQ(integer(table, 0, "copies_in"), 2);
  EXPECT_EQ(integer(table, 0, "bytes_in"), 8192);
  EXPECT_EQ(integer(table, 0, "copies_out"), 1);
  EXPECT_EQ(integer(table, 0, "bytes_out"), 1024);
  EXPECT_EQ(integer(table, 0, "memsets"), 0);
  EXPECT_EQ(integer(table, 1, "allocation"), b);
  EXPECT_EQ(integer(table, 1, "kernels"), 2);
  EXPECT_EQ(integer(table, 1, "copies_in"), 0);
  EXPECT_EQ(integer(table, 1, "memsets"), 1);
  EXPECT_EQ(integer(table, 2, "allocation"), c);
  EXPECT_EQ(text(table, 2, "place"), "host");
  EXPECT_EQ(text(table, 2, "kind"), "pinned host");
  EXPECT_EQ(integer(table, 2, "kernels"), 0);
  EXPECT_EQ(integer(table, 2, "bytes_in"), 1024);
  EXPECT_EQ(integer(table, 2, "bytes_out"), 8192);
}

// The tracer's own time per site, from its sampled rows: two stretches of
// malloc hooks (1 in 32 timed, 10 ns a clock read off each timed call) and
// one of CUDA callbacks timed whole (--self-cost), over a 1 ms run (the
// stretches' span: the tracer's life).
TEST(TracerReport, EachSiteItsCallsTimeAndShareOfTheRun) {
  TraceBuilder builder;
  builder.add_tracer_time(0, 500'000, TracerSite::HostAllocate, 10, 600, 32);
  builder.add_tracer_time(500'000, 1'000'000, TracerSite::HostAllocate, 5, 300, 32);
  builder.add_tracer_time(0, 500'000, TracerSite::ApiCallback, 4, 8'000, 1);
  builder.set_meta("tracer_time_clock_ns", "10");
  ReportOutput output = run_report(tracer_report, builder.db());
  ASSERT_EQ(output.tables.size(), 1u) << output.note;
  const Table& table = output.tables.front();
  ASSERT_EQ(table.rows.size(), 2u);
  EXPECT_EQ(text(table, 0, "site"), "host_allocate");
  EXPECT_EQ(text(table, 0, "thread"), "program, between calls");
  EXPECT_EQ(integer(table, 0, "calls"), 15 * 32);
  EXPECT_EQ(integer(table, 0, "total_ns"), (500 + 250) * 32);
  EXPECT_EQ(integer(table, 0, "ns_per_call"), 50);
  EXPECT_DOUBLE_EQ(real(table, 0, "run_share"), 0.024);
  EXPECT_EQ(integer(table, 0, "timed_calls"), 15);
  EXPECT_EQ(text(table, 1, "site"), "api_callback");
  EXPECT_EQ(text(table, 1, "thread"), "program, in calls");
  EXPECT_EQ(integer(table, 1, "calls"), 4);
  EXPECT_EQ(integer(table, 1, "total_ns"), 7'960);
}

// Limited to steps 2-3 of four 1 ms steps (NVTX ranges), a stretch over
// all four counts by its half inside them, and the run is their 2 ms.
TEST(TracerReport, LimitedToStepsItCountsTheirShare) {
  TraceBuilder builder;
  for (int i = 0; i < 4; ++i) {
    NvtxRangeRow range;
    range.name = "step";
    range.start_ns = i * 1'000'000;
    range.end_ns = (i + 1) * 1'000'000;
    builder.add(range);
  }
  builder.add_tracer_time(0, 4'000'000, TracerSite::FrameworkRange, 40, 4'000, 32);
  builder.set_meta("tracer_time_clock_ns", "0");
  trace::Trace trace(builder.db());
  trace.limit_to_steps(trace::StepSelection{std::make_pair(2, 3), false});
  ReportOutput output = tracer_report(trace);
  ASSERT_EQ(output.tables.size(), 1u) << output.note;
  const Table& table = output.tables.front();
  ASSERT_EQ(table.rows.size(), 1u);
  EXPECT_EQ(integer(table, 0, "calls"), 20 * 32);
  EXPECT_EQ(integer(table, 0, "total_ns"), 2'000 * 32);
  EXPECT_DOUBLE_EQ(real(table, 0, "run_share"), 0.032);
  EXPECT_EQ(integer(table, 0, "timed_calls"), 20);
}

TEST(TracerReport, ATraceFromBeforeItSaysSo) {
  TraceBuilder builder;
  builder.db().exec("DROP TABLE tracer_time");
  ReportOutput output = run_report(tracer_report, builder.db());
  EXPECT_TRUE(output.tables.empty());
  EXPECT_NE(output.note.find("recorded before apptracer measured its own time"), std::string::npos) << output.note;
}

TEST(StatsReportsEmpty, AnEmptyTraceHasOneIdleProcessAndNoOtherRows) {
  TraceBuilder builder;
  for (const StatsReport& report : stats_reports()) {
    ReportOutput output = run_report(report.compute, builder.db());
    // The um report has nothing to say about a trace without unified memory.
    if (std::string(report.name) == "um") {
      EXPECT_TRUE(output.tables.empty());
      EXPECT_EQ(output.note,
                "no unified memory in this trace: no managed allocations, migrations, faults, "
                "prefetches or advice");
      continue;
    }
    // Nor the exact report about a trace recorded without --exact.
    if (std::string(report.name) == "exact") {
      EXPECT_TRUE(output.tables.empty());
      EXPECT_EQ(output.note,
                "no --exact data in this trace: record it with `apptracer record --exact`");
      continue;
    }
    // Nor the kernel traffic report about a trace whose kernels reach no other memory.
    if (std::string(report.name) == "kernel_traffic") {
      EXPECT_TRUE(output.tables.empty());
      EXPECT_EQ(output.note, "no kernel loaded or stored another GPU's memory or pinned host memory");
      continue;
    }
    // Nor the stragglers report about a trace with no collective of two ranks.
    if (std::string(report.name) == "stragglers") {
      EXPECT_TRUE(output.tables.empty());
      EXPECT_NE(output.note.find("apptracer merge"), std::string::npos) << output.note;
      continue;
    }
    // Nor the modules and ops reports about a trace without framework ranges.
    if (std::string(report.name) == "modules" || std::string(report.name) == "ops") {
      EXPECT_TRUE(output.tables.empty());
      EXPECT_NE(output.note.find("no framework ranges"), std::string::npos) << output.note;
      continue;
    }
    // Nor the memory report about a trace with no allocation.
    if (std::string(report.name) == "memory") {
      EXPECT_TRUE(output.tables.empty());
      EXPECT_EQ(output.note, "memory: the trace records no allocation");
      continue;
    }
    // Nor the tracer report about a trace in which the tracer timed nothing.
    if (std::string(report.name) == "tracer") {
      EXPECT_TRUE(output.tables.empty());
      EXPECT_EQ(output.note, "apptracer timed none of its own work in this trace (tracer_time is empty)");
      continue;
    }
    // Nor the steps report about a trace with no steps.
    if (std::string(report.name) == "steps") {
      EXPECT_TRUE(output.tables.empty());
      EXPECT_EQ(output.note, "no steps: no NVTX step ranges and no repeating launch sequence");
      continue;
    }
    ASSERT_EQ(output.tables.size(), 1u) << report.name;
    const Table& table = output.tables.front();
    EXPECT_EQ(table.name, report.name);
    EXPECT_FALSE(table.columns.empty()) << report.name;
    if (table.name != "processes") {
      EXPECT_TRUE(table.rows.empty()) << report.name;
      continue;
    }
    ASSERT_EQ(table.rows.size(), 1u);
    EXPECT_EQ(integer(table, 0, "pid"), 0);  // the trace does not say
    EXPECT_EQ(text(table, 0, "program"), "process 0");
    EXPECT_EQ(integer(table, 0, "api_calls"), 0);
    EXPECT_EQ(integer(table, 0, "sync_ns"), 0);
  }
}

// Each module's and op's row counts the work issued inside it; what no
// module issued is one "(none)" row, so the rows add up to the trace.
TEST(StatsReportsFramework, ModulesAndOpsCountTheWorkIssuedInThem) {
  TraceBuilder builder;
  builder.add_framework_range(FrameworkRangeKind::Module, "head.fc", 100, 200);
  builder.add_framework_range(FrameworkRangeKind::Op, "aten::addmm", 110, 190);
  auto call = [&](int64_t correlation, int64_t ns) {
    ApiCallRow row;
    row.correlation_id = correlation;
    row.start_ns = ns;
    row.end_ns = ns + 5;
    builder.add(row);
  };
  call(1, 150);
  KernelRow in_module;
  in_module.call_correlation_id = 1;
  in_module.gpu_start_ns = 300;
  in_module.gpu_end_ns = 400;
  builder.add(in_module);
  call(2, 105);
  MemcpyRow copy;
  copy.call_correlation_id = 2;
  copy.bytes = 64;
  copy.gpu_start_ns = 130;
  copy.gpu_end_ns = 160;
  builder.add(copy);
  call(3, 500);
  KernelRow outside;
  outside.call_correlation_id = 3;
  outside.gpu_start_ns = 600;
  outside.gpu_end_ns = 650;
  builder.add(outside);
  SubAllocationRow block;
  block.address = 1 << 20;
  block.bytes = 64;
  block.alloc_ns = 115;
  builder.add(block);

  ReportOutput modules = run_report(modules_report, builder.db());
  ASSERT_EQ(modules.tables.size(), 1u) << modules.note;
  const Table& table = modules.tables.front();
  ASSERT_EQ(table.rows.size(), 2u);
  EXPECT_EQ(text(table, 0, "module"), "head.fc");
  EXPECT_EQ(text(table, 0, "phase"), "forward");
  EXPECT_EQ(integer(table, 0, "launches"), 1);
  EXPECT_EQ(integer(table, 0, "copies"), 1);
  EXPECT_EQ(integer(table, 0, "allocations"), 1);
  EXPECT_EQ(integer(table, 0, "gpu_ns"), 130);
  EXPECT_DOUBLE_EQ(real(table, 0, "launch_share"), 0.5);
  EXPECT_EQ(text(table, 1, "module"), "(none)");
  EXPECT_EQ(integer(table, 1, "launches"), 1);
  EXPECT_EQ(integer(table, 1, "gpu_ns"), 50);

  ReportOutput ops = run_report(ops_report, builder.db());
  ASSERT_EQ(ops.tables.size(), 1u);
  EXPECT_EQ(text(ops.tables.front(), 0, "op"), "aten::addmm");
  EXPECT_EQ(integer(ops.tables.front(), 0, "launches"), 1);
  EXPECT_EQ(integer(ops.tables.front(), 0, "copies"), 0) << "the copy was issued before the op began";
}

// A trace that sampled its ops says how many launches took theirs from
// other steps: two NVTX steps, the op recorded in the first only.
TEST(StatsReportsFramework, ASampledTraceSaysHowManyLaunchesWereNamedFromOtherSteps) {
  TraceBuilder builder;
  builder.set_meta("framework_ranges.op_sample_every", "16");
  for (int64_t step = 1; step <= 2; ++step) {
    NvtxRangeRow range;
    range.name = "step " + std::to_string(step);
    range.start_ns = 1000 * step;
    range.end_ns = 1000 * step + 999;
    builder.add(range);
    ApiCallRow call;
    call.correlation_id = step;
    call.start_ns = 1000 * step + 100;
    call.end_ns = call.start_ns + 5;
    builder.add(call);
    KernelRow kernel;
    kernel.call_correlation_id = step;
    kernel.gpu_start_ns = 1000 * step + 200;
    kernel.gpu_end_ns = 1000 * step + 300;
    builder.add(kernel);
  }
  builder.add_framework_range(FrameworkRangeKind::Op, "aten::addmm", 1050, 1150);
  ReportOutput ops = run_report(ops_report, builder.db());
  ASSERT_EQ(ops.tables.size(), 1u);
  EXPECT_EQ(text(ops.tables.front(), 0, "op"), "aten::addmm");
  EXPECT_EQ(integer(ops.tables.front(), 0, "launches"), 2);
  EXPECT_EQ(ops.note,
            "ops recorded for 1 in 16 calls (sampled, the default): 1 of 2 kernel "
            "launches named from the same launch in other steps");
  // No module recorded anywhere: every launch unnamed, and how to name them.
  ReportOutput modules = run_report(modules_report, builder.db());
  EXPECT_EQ(modules.note,
            "ops recorded for 1 in 16 calls (sampled, the default): 1 of 2 kernel launches named "
            "from the same launch in other steps; 2 (100%) have no module: the fewer the steps, the "
            "fewer places a step recorded (record --framework-context on records every op)");
}

// A damaged trace can hold any 64-bit number: sums and differences saturate
// at the int64 range instead of overflowing.
TEST_F(StatsReports, HugeValuesSaturateInsteadOfOverflowing) {
  builder_.db().exec(
      "UPDATE memcpys SET bytes = 9223372036854775807, gpu_start_ns = -9223372036854775808, "
      "gpu_end_ns = 9223372036854775807;"
      "UPDATE memsets SET bytes = 9223372036854775807;"
      "UPDATE kernels SET gpu_start_ns = -9223372036854775808, gpu_end_ns = 9223372036854775807 "
      "WHERE gpu_start_ns IS NOT NULL;"
      "UPDATE allocations SET bytes = CASE WHEN id % 2 = 0 THEN 9223372036854775807 "
      "ELSE -9223372036854775808 END;"
      "UPDATE api_calls SET start_ns = -9223372036854775808, end_ns = 9223372036854775807;"
      "UPDATE syncs SET start_ns = -9223372036854775808, end_ns = 9223372036854775807");
  constexpr int64_t kMax = INT64_MAX;
  Table copies = run_report(copies_report, builder_.db());
  ASSERT_FALSE(copies.rows.empty());
  for (size_t row = 0; row < copies.rows.size(); ++row) {
    if (integer(copies, row, "count") > 1) EXPECT_EQ(integer(copies, row, "bytes"), kMax);
  }
  Table processes = run_report(processes_report, builder_.db());
  EXPECT_EQ(integer(processes, 0, "copy_bytes"), kMax);
  EXPECT_EQ(integer(processes, 0, "api_ns"), kMax);
  EXPECT_EQ(integer(processes, 0, "kernel_ns"), kMax);
  Table kernels = run_report(kernels_report, builder_.db());
  EXPECT_EQ(integer(kernels, 0, "total_ns"), kMax);
  Table memsets = run_report(memsets_report, builder_.db());
  EXPECT_EQ(integer(memsets, 0, "bytes"), kMax);
  Table streams = run_report(streams_report, builder_.db());
  for (size_t row = 0; row < streams.rows.size(); ++row) {
    if (!is_null(streams, row, "span_ns")) EXPECT_EQ(integer(streams, row, "span_ns"), kMax);
  }
  // Every report runs to its end on such a trace.
  for (const StatsReport& report : stats_reports()) run_report(report.compute, builder_.db());
}

}  // namespace
}  // namespace apptracer::testing
