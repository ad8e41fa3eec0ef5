// `apptracer merge`: every row of every input kept, ids unique, joins still
// valid within each process, devices shared by UUID, inputs untouched.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <iterator>

#include "analyzer/merge/merge.h"
#include "report_test_helpers.h"
#include "sample_trace.h"
#include "scratch_dir.h"
#include "analyzer/query/sql_query.h"
#include "analyzer/stats/stats_reports.h"
#include "analyzer/timeline/timeline.h"
#include "analyzer/trace/trace_file.h"

namespace apptracer::testing {
namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// One small process: a malloc and a launch on stream 7 by thread 100, on the
// GPU with `uuid` as device 0.
void build_process(const std::string& path, const std::string& pid, const std::string& uuid,
                   const std::string& kernel_name) {
  TraceBuilder builder(path);
  builder.set_meta("pid", pid);
  builder.set_meta("command_line", "./rank " + pid);
  builder.add_thread(100, "main");
  DeviceRow device;
  device.uuid = uuid;
  builder.add_device(device);
  ApiCallRow call;
  call.correlation_id = 1;
  call.name = "cudaMalloc";
  call.tid = 100;
  call.start_ns = 10;
  call.end_ns = 20;
  builder.add(call);
  call.correlation_id = 2;
  call.name = "cudaLaunchKernel";
  call.start_ns = 30;
  call.end_ns = 40;
  builder.add(call);
  AllocationRow allocation;
  allocation.bytes = 1024;
  allocation.alloc_ns = 20;
  allocation.alloc_correlation_id = 1;
  int64_t alloc_id = builder.add(allocation);
  KernelRow kernel;
  kernel.call_correlation_id = 2;
  kernel.demangled_name = kernel_name;
  kernel.stream = 7;
  kernel.gpu_start_ns = 50;
  kernel.gpu_end_ns = 90;
  int64_t kernel_id = builder.add(kernel);
  KernelArgRow arg;
  arg.kernel_id = kernel_id;
  arg.alloc_id = alloc_id;
  builder.add(arg);
}

class Merge : public ::testing::Test {
 protected:
  void SetUp() override {
    a_ = scratch_ / "a.db";
    b_ = scratch_ / "b.db";
    out_ = scratch_ / "all.db";
    build_process(a_, "10", "GPU-A", "k()");
    build_process(b_, "11", "GPU-B", "k()");
  }

  int64_t number(const std::string& sql) {
    Database db = open_trace(out_, TraceAccess::ReadOnly);
    Table table = run_read_only_query(db, sql);
    return integer(table, 0, table.columns[0]);
  }

  // The error merging a_ then b_ fails with once `sql` has changed `trace`.
  std::string merge_error_after(const std::string& trace, const std::string& sql) {
    Database(trace, Database::Mode::ReadWrite).exec(sql);
    Progress quiet("test");
    try {
      merge_traces({a_, b_}, out_, false, quiet);
    } catch (const TraceError& error) {
      return error.what();
    }
    return "merged without an error";
  }

  void merge() {
    Progress quiet("test");
    MergeSummary summary = merge_traces({a_, b_}, out_, false, quiet);
    EXPECT_EQ(summary.processes, 2);
  }

  ScratchDir scratch_;
  std::string a_, b_, out_;
};

TEST_F(Merge, KeepsEveryRowOfEveryProcess) {
  merge();
  EXPECT_EQ(number("SELECT count(*) FROM api_calls"), 4);
  EXPECT_EQ(number("SELECT count(*) FROM kernels"), 2);
  EXPECT_EQ(number("SELECT count(*) FROM allocations"), 2);
  EXPECT_EQ(number("SELECT count(*) FROM kernel_args"), 2);
  EXPECT_EQ(number("SELECT count(*) FROM threads"), 2);
  EXPECT_EQ(number("SELECT count(*) FROM api_calls WHERE process_id = 2"), 2);
  EXPECT_EQ(number("SELECT count(*) FROM processes"), 2);
  EXPECT_EQ(number("SELECT pid FROM processes WHERE process_id = 2"), 11);
}

TEST_F(Merge, IdsAreUniqueAndJoinsStayInsideTheirProcess) {
  merge();
  for (const char* table : {"api_calls", "kernels", "allocations"}) {
    EXPECT_EQ(number(std::string("SELECT count(DISTINCT id) FROM ") + table),
              number(std::string("SELECT count(*) FROM ") + table))
        << table;
  }
  EXPECT_EQ(number("SELECT count(DISTINCT correlation_id) FROM api_calls"), 4);
  EXPECT_EQ(number("SELECT count(DISTINCT text) FROM strings"), number("SELECT count(*) FROM strings"));
  // Each kernel still finds its own launch and its own allocation.
  EXPECT_EQ(number("SELECT count(*) FROM kernels k JOIN api_calls a ON a.correlation_id = "
                   "k.call_correlation_id AND a.process_id = k.process_id "
                   "JOIN strings s ON s.id = a.name_id WHERE s.text = 'cudaLaunchKernel'"),
            2);
  EXPECT_EQ(number("SELECT count(*) FROM kernel_args ka JOIN kernels k ON k.id = ka.kernel_id "
                   "JOIN allocations al ON al.id = ka.alloc_id "
                   "WHERE al.process_id = k.process_id AND ka.process_id = k.process_id"),
            2);
  // The second process's correlation ids were shifted past the first's (1, 2).
  EXPECT_EQ(number("SELECT offset FROM merge_offsets WHERE process_id = 2 AND id_space = 'correlation_id'"), 2);
  EXPECT_EQ(number("SELECT min(correlation_id) FROM api_calls WHERE process_id = 2"), 3);
}

TEST_F(Merge, CollidingThreadAndStreamIdsAreShiftedAndDevicesSharedByUuid) {
  merge();
  EXPECT_EQ(number("SELECT tid FROM threads WHERE process_id = 1"), 100);
  EXPECT_EQ(number("SELECT tid FROM threads WHERE process_id = 2"), 101);
  EXPECT_EQ(number("SELECT DISTINCT tid FROM api_calls WHERE process_id = 2"), 101);
  EXPECT_EQ(number("SELECT stream FROM kernels WHERE process_id = 2"), 8);
  // Device 0 of the second process is another GPU, so it becomes device 1.
  EXPECT_EQ(number("SELECT count(*) FROM devices"), 2);
  EXPECT_EQ(number("SELECT device FROM merge_devices WHERE process_id = 2 AND ordinal = 0"), 1);
  EXPECT_EQ(number("SELECT device FROM kernels WHERE process_id = 2"), 1);
  EXPECT_EQ(number("SELECT device FROM allocations WHERE process_id = 2"), 1);
}

TEST_F(Merge, TheSameGpuInTwoProcessesIsOneDevice) {
  build_process(b_ + "same", "12", "GPU-A", "k()");
  Progress quiet("test");
  merge_traces({a_, b_ + "same"}, out_, false, quiet);
  EXPECT_EQ(number("SELECT count(*) FROM devices"), 1);
  Database db = open_trace(out_, TraceAccess::ReadOnly);
  Table allocations = run_report(allocations_report, db);
  ASSERT_EQ(allocations.rows.size(), 2u);  // device 0: "device" and "all"
  EXPECT_EQ(integer(allocations, 1, "bytes"), 2048);
  EXPECT_EQ(integer(allocations, 1, "peak_live_bytes"), 2048);
}

TEST_F(Merge, TheMergedTraceReadsWithTheAnalyzerCommands) {
  merge();
  Database db = open_trace(out_, TraceAccess::ReadOnly);
  EXPECT_EQ(trace_meta(db, "status"), "complete");
  Table kernels = run_report(kernels_report, db);
  ASSERT_EQ(kernels.rows.size(), 1u);
  EXPECT_EQ(integer(kernels, 0, "count"), 2);
  EXPECT_EQ(run_report(streams_report, db).rows.size(), 2u);
  Progress quiet("test");
  trace::Trace model(db);
  Timeline timeline = build_timeline(model, quiet);
  size_t processes = 0;
  for (const TimelineTrack& track : timeline.tracks) {
    processes += track.kind == TimelineTrack::Kind::Process;
  }
  EXPECT_EQ(processes, 2u);
  EXPECT_EQ(timeline.tracks.size(), 8u);  // per process: process, thread, stream, GPU memory
  EXPECT_EQ(timeline.api_flow_count, 2u);
}

TEST_F(Merge, TheSampleTwiceDoublesEveryReportAndKeepsEveryReference) {
  // Two processes that did the same (one file given twice is refused).
  for (const std::string& path : {a_, b_}) {
    std::remove(path.c_str());
    TraceBuilder sample(path);
    build_sample_trace(sample);
  }
  Progress quiet("test");
  EXPECT_THROW(merge_traces({a_, a_}, out_, false, quiet), std::runtime_error);
  MergeSummary summary = merge_traces({a_, b_}, out_, false, quiet);
  EXPECT_EQ(summary.processes, 2);
  for (const char* table : {"api_calls", "allocations", "memcpys", "memsets", "kernels",
                            "kernel_args", "syncs", "nvtx_ranges", "threads"}) {
    EXPECT_EQ(number(std::string("SELECT count(*) FROM ") + table + " WHERE process_id = 2"),
              number(std::string("SELECT count(*) FROM ") + table + " WHERE process_id = 1"))
        << table;
  }
  // Copies and kernel arguments point into allocations of their own process.
  EXPECT_EQ(number("SELECT count(*) FROM memcpys m JOIN allocations a ON a.id IN "
                   "(m.src_alloc_id, m.dst_alloc_id) WHERE a.process_id = m.process_id"),
            4);
  EXPECT_EQ(number("SELECT count(*) FROM memcpys m JOIN allocations a ON a.id IN "
                   "(m.src_alloc_id, m.dst_alloc_id) WHERE a.process_id != m.process_id"),
            0);
  // The driver call's parent is the runtime launch of its own process.
  EXPECT_EQ(number("SELECT count(*) FROM api_calls d JOIN api_calls r ON r.correlation_id = "
                   "d.parent_correlation_id AND r.process_id = d.process_id "
                   "JOIN strings s ON s.id = r.name_id WHERE s.text = 'cudaLaunchKernel'"),
            2);
  // A driver call folded into its runtime call keeps its name.
  EXPECT_EQ(number("SELECT count(*) FROM api_calls a JOIN strings s ON s.id = a.driver_name_id "
                   "WHERE s.text = 'cuLaunchKernel'"),
            2);
  Database db = open_trace(out_, TraceAccess::ReadOnly);
  Table copies = run_report(copies_report, db);
  ASSERT_EQ(copies.rows.size(), 3u);
  EXPECT_EQ(integer(copies, 0, "bytes"), 10000);
  EXPECT_DOUBLE_EQ(real(copies, 0, "bandwidth_gbps"), 10.0);
  Table api = run_report(api_calls_report, db);
  EXPECT_EQ(integer(api, 0, "count"), 4);  // cudaMemcpy, twice per process
  EXPECT_EQ(integer(api, 0, "total_ns"), 3000);
  Table processes = run_report(processes_report, db);
  ASSERT_EQ(processes.rows.size(), 2u);
  for (size_t row = 0; row < 2; ++row) {
    EXPECT_EQ(integer(processes, row, "process_id"), static_cast<int64_t>(row + 1));
    EXPECT_EQ(integer(processes, row, "pid"), 4242);
    EXPECT_EQ(integer(processes, row, "api_ns"), 4110);
    EXPECT_EQ(integer(processes, row, "kernel_ns"), 1700);
  }
  Table streams = run_report(streams_report, db);
  EXPECT_EQ(streams.rows.size(), 6u);  // streams 7-9 of each process kept apart
  Progress quiet_timeline("test");
  trace::Trace model(db);
  Timeline timeline = build_timeline(model, quiet_timeline);
  EXPECT_EQ(timeline.tracks.size(), 2 * kSampleTracks);
  EXPECT_EQ(timeline.slices.size(), 2 * kSampleSlices);
  EXPECT_EQ(timeline.api_flow_count, 2 * kSampleApiFlows);
}

TEST_F(Merge, LeavesInputsUntouchedAndRefusesToOverwrite) {
  std::string before_a = read_file(a_);
  std::string before_b = read_file(b_);
  merge();
  EXPECT_EQ(read_file(a_), before_a);
  EXPECT_EQ(read_file(b_), before_b);
  Progress quiet("test");
  EXPECT_THROW(merge_traces({a_, b_}, out_, false, quiet), std::runtime_error);
  EXPECT_NO_THROW(merge_traces({a_, b_}, out_, true, quiet));
  EXPECT_THROW(merge_traces({a_, out_}, b_ + "x", false, quiet), std::runtime_error);  // merged input
  EXPECT_THROW(merge_traces({a_, b_}, a_, true, quiet), std::runtime_error);
}

TEST_F(Merge, AnIncompleteInputMakesAnIncompleteMerge) {
  {
    Database db(b_, Database::Mode::ReadWrite);
    db.exec("UPDATE meta SET value = 'incomplete' WHERE key = 'status'");
  }
  merge();
  Database db = open_trace(out_, TraceAccess::ReadOnly);
  EXPECT_EQ(trace_meta(db, "status"), "incomplete");
  EXPECT_EQ(number("SELECT count(*) FROM processes WHERE status = 'incomplete'"), 1);
}

// Ids at the ends of int64 (a damaged trace): merged after another trace they
// cannot be renumbered, which is said in one line naming the file; they never
// wrap around to negative ids.
TEST_F(Merge, IdsThatCannotBeRenumberedRefuseTheirTrace) {
  EXPECT_NE(merge_error_after(a_, "UPDATE kernels SET id = 9223372036854775807")
                .find(b_ + ": its kernels.id values are too large to renumber"),
            std::string::npos);
  EXPECT_FALSE(std::ifstream(out_).good()) << "no merged trace left behind";
  // Given first, it keeps its ids and the other trace's come before it.
  Progress quiet("test");
  merge_traces({b_, a_}, out_, false, quiet);
  EXPECT_EQ(number("SELECT id FROM kernels WHERE process_id = 2"), 9223372036854775807);
  EXPECT_EQ(number("SELECT min(id) FROM kernels"), 1);
}

TEST_F(Merge, AReferenceThatCannotBeRenumberedRefusesItsTrace) {
  EXPECT_NE(merge_error_after(b_, "UPDATE kernels SET arg_set_id = 9223372036854775807")
                .find(b_ + ": kernel_arg_sets.id 9223372036854775807 is too large"),
            std::string::npos);
}

TEST_F(Merge, AKeyTwiceInMetaNamesItsTrace) {
  EXPECT_EQ(merge_error_after(b_, "UPDATE meta SET key = CAST('pid' AS BLOB) WHERE key = 'command_line'"),
            b_ + ": its meta table holds the key 'pid' twice; is the trace damaged?");
}

// Traces recorded before schema 3 (the examples bundled until then, kept as
// test data) have a kernel_args table rather than shared sets of words.
// Merged, each launch keeps its words, so the merged DVDG has every kernel's
// reads and writes.
TEST(MergeSchema2, EveryLaunchKeepsItsParameterWords) {
  std::string examples = APPTRACER_SCHEMA2_TRACES;
  ScratchDir scratch;
  std::string out = scratch / "merged.db";
  Progress quiet("test");
  merge_traces({examples + "/vector_add.db", examples + "/um_bandwidth_h100.db"}, out, false, quiet);
  auto count = [](const std::string& path, const std::string& sql) {
    Database db = open_trace(path, TraceAccess::ReadOnly);
    Table table = run_read_only_query(db, sql);
    return integer(table, 0, table.columns[0]);
  };
  int64_t words = count(examples + "/vector_add.db", "SELECT count(*) FROM kernel_args") +
                  count(examples + "/um_bandwidth_h100.db", "SELECT count(*) FROM kernel_args");
  EXPECT_GT(words, 0);
  EXPECT_EQ(count(out, "SELECT count(*) FROM kernel_args"), words);
  EXPECT_EQ(count(out, "SELECT count(*) FROM kernel_args a JOIN kernels k ON k.id = a.kernel_id "
                       "JOIN allocations m ON m.id = a.alloc_id "
                       "WHERE k.process_id != m.process_id"), 0)
      << "each word points into its own process's allocations";
}

}  // namespace
}  // namespace apptracer::testing
