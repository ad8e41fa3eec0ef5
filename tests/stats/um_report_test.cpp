// `stats --report um` on the scenario of tests/support/um_scenario.h, every
// number worked out by hand from its rows; then first vs later launches, and
// the one-line notes for traces without unified memory or too old for it.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "report_test_helpers.h"
#include "scratch_dir.h"
#include "analyzer/stats/stats_reports.h"
#include "um_scenario.h"

namespace apptracer::testing {
namespace {

class UmReport : public ::testing::Test {
 protected:
  void SetUp() override { ids_ = add_um_scenario(builder_); }

  std::vector<Table> tables() {
    ReportOutput output = run_report(um_report, builder_.db());
    EXPECT_TRUE(output.note.empty()) << output.note;
    return output.tables;
  }

  TraceBuilder builder_;
  UmScenario ids_{};
};

TEST_F(UmReport, PerManagedAllocationWhatMovedAndWhichAdviceCameBeforeItsFirstTouch) {
  std::vector<Table> output = tables();
  ASSERT_EQ(output.size(), 2u);
  const Table& table = output[0];
  EXPECT_EQ(table.name, "um_allocations");
  ASSERT_EQ(table.rows.size(), 3u);  // m, q, the unknown region

  // m: first touched by the host's fault at 100, so the advice at 50 came
  // before it and the one at 1750 after. 2 x 32 MiB in during sum, 64 MiB out
  // when the host read it; 2 GPU fault groups, 4 CPU faults.
  EXPECT_EQ(integer(table, 0, "allocation"), ids_.m);
  EXPECT_EQ(text(table, 0, "kind"), "managed");
  EXPECT_EQ(text(table, 0, "address"), "0x7e0000000000");
  EXPECT_EQ(integer(table, 0, "bytes"), 64 * kMiB);
  EXPECT_EQ(integer(table, 0, "device"), 0);
  EXPECT_EQ(text(table, 0, "advice"),
            "set preferred location device 0 (before first touch); "
            "set accessed by device 0 (after first touch)");
  EXPECT_EQ(integer(table, 0, "htod_bytes"), 67108864);
  EXPECT_EQ(integer(table, 0, "dtoh_bytes"), 67108864);
  EXPECT_EQ(integer(table, 0, "dtod_bytes"), 0);
  EXPECT_EQ(integer(table, 0, "prefetch_bytes"), 0);
  EXPECT_EQ(integer(table, 0, "gpu_fault_groups"), 2);
  EXPECT_EQ(integer(table, 0, "cpu_faults"), 4);
  EXPECT_EQ(integer(table, 0, "remote_map_bytes"), 0);
  EXPECT_EQ(integer(table, 0, "thrashing"), 0);

  // q: 2 MiB in, all of it by the prefetch.
  EXPECT_EQ(integer(table, 1, "allocation"), ids_.q);
  EXPECT_EQ(text(table, 1, "address"), "0x7e0010000000");
  EXPECT_EQ(text(table, 1, "advice"), "");
  EXPECT_EQ(integer(table, 1, "htod_bytes"), 2097152);
  EXPECT_EQ(integer(table, 1, "prefetch_bytes"), 2097152);
  EXPECT_EQ(integer(table, 1, "gpu_fault_groups"), 0);

  // The `__managed__` variable: one page in, one fault group, kept as a line.
  EXPECT_EQ(text(table, 2, "allocation"), "unknown managed region");
  EXPECT_TRUE(is_null(table, 2, "kind"));
  EXPECT_EQ(text(table, 2, "address"), "0x600000-0x601000");
  EXPECT_EQ(integer(table, 2, "bytes"), 4096);
  EXPECT_TRUE(is_null(table, 2, "device"));
  EXPECT_EQ(integer(table, 2, "htod_bytes"), 4096);
  EXPECT_EQ(integer(table, 2, "gpu_fault_groups"), 1);
  EXPECT_EQ(integer(table, 2, "cpu_faults"), 0);
}

TEST_F(UmReport, PerKernelTheFirstLaunchPaysForTheMigration) {
  std::vector<Table> output = tables();
  ASSERT_EQ(output.size(), 2u);
  const Table& table = output[1];
  EXPECT_EQ(table.name, "um_kernels");
  ASSERT_EQ(table.rows.size(), 2u);
  // sum: 64 MiB of m and the 4 KiB page of the variable arrived during its
  // first launch (1000 ns, 3 fault groups); the second (100 ns) moved nothing.
  EXPECT_EQ(text(table, 0, "name"), "sum");
  EXPECT_EQ(integer(table, 0, "launches"), 2);
  EXPECT_EQ(integer(table, 0, "bytes_in"), 67112960);
  EXPECT_EQ(integer(table, 0, "first_ns"), 1000);
  EXPECT_DOUBLE_EQ(real(table, 0, "later_mean_ns"), 100.0);
  EXPECT_EQ(integer(table, 0, "first_bytes_in"), 67112960);
  EXPECT_DOUBLE_EQ(real(table, 0, "later_mean_bytes_in"), 0.0);
  EXPECT_EQ(integer(table, 0, "first_fault_groups"), 3);
  EXPECT_DOUBLE_EQ(real(table, 0, "later_mean_fault_groups"), 0.0);
  // scale: q was prefetched, so nothing arrived while it ran; launched once.
  EXPECT_EQ(text(table, 1, "name"), "scale");
  EXPECT_EQ(integer(table, 1, "launches"), 1);
  EXPECT_EQ(integer(table, 1, "bytes_in"), 0);
  EXPECT_EQ(integer(table, 1, "first_ns"), 100);
  EXPECT_TRUE(is_null(table, 1, "later_mean_ns"));
  EXPECT_TRUE(is_null(table, 1, "later_mean_bytes_in"));
  EXPECT_EQ(integer(table, 1, "first_fault_groups"), 0);
}

// Three launches of one kernel, in GPU order 1000 ns with 8 MiB in, then
// 200 ns with 2 MiB and a fault group, then 100 ns with nothing.
TEST(UmReportLaunches, LaterLaunchesAreAveraged) {
  TraceBuilder builder;
  AllocationRow managed;
  managed.kind = AllocKind::Managed;
  managed.address = 0x7e0000000000;
  managed.bytes = 16 * kMiB;
  int64_t m = builder.add(managed);
  struct Run {
    int64_t gpu_start, gpu_end, bytes_in;
    bool fault;
  };
  // Issued out of GPU order: the report goes by GPU start.
  for (const Run& run : {Run{5000, 5100, 0, false}, Run{1000, 2000, 8 * kMiB, false},
                         Run{3000, 3200, 2 * kMiB, true}}) {
    KernelRow kernel;
    kernel.demangled_name = "step(float*)";
    kernel.stream = 7;
    kernel.api_start_ns = run.gpu_start - 100;
    kernel.gpu_start_ns = run.gpu_start;
    kernel.gpu_end_ns = run.gpu_end;
    builder.add(kernel);
    UmEventRow event;
    event.alloc_id = m;
    event.address = managed.address;
    event.dst_device = 0;
    event.start_ns = run.gpu_start + 10;
    event.end_ns = run.gpu_start + 20;
    event.cause = 2;  // coherence: what a kernel's faults give (user is a call's)
    if (run.bytes_in > 0) {
      event.bytes = event.value = run.bytes_in;
      builder.add(event);
    }
    if (run.fault) {
      event.counter_kind = UmCounterKind::GpuPageFault;
      event.src_device = 0;
      event.dst_device.reset();
      event.bytes.reset();
      event.value = 7;
      builder.add(event);
    }
  }
  ReportOutput output = run_report(um_report, builder.db());
  ASSERT_EQ(output.tables.size(), 2u);
  const Table& table = output.tables[1];
  ASSERT_EQ(table.rows.size(), 1u);
  EXPECT_EQ(integer(table, 0, "launches"), 3);
  EXPECT_EQ(integer(table, 0, "bytes_in"), 10 * kMiB);
  EXPECT_EQ(integer(table, 0, "first_ns"), 1000);
  EXPECT_DOUBLE_EQ(real(table, 0, "later_mean_ns"), 150.0);
  EXPECT_EQ(integer(table, 0, "first_bytes_in"), 8 * kMiB);
  EXPECT_DOUBLE_EQ(real(table, 0, "later_mean_bytes_in"), 1048576.0);
  EXPECT_EQ(integer(table, 0, "first_fault_groups"), 0);
  EXPECT_DOUBLE_EQ(real(table, 0, "later_mean_fault_groups"), 0.5);
}

// An explicit prefetch's migrations carry CUPTI's cause "user" (seen on the
// H100). One that runs while a kernel of another stream runs on the target
// device is the prefetch's, not the kernel's: a kernel's faults give other
// causes. The driver's own "prefetch" cause during a kernel is the kernel's.
TEST(UmReportPrefetch, UserMigrationsBesideAKernelAreThePrefetchs) {
  TraceBuilder builder;
  AllocationRow managed;
  managed.kind = AllocKind::Managed;
  managed.address = 0x7e0000000000;
  managed.bytes = 8 * kMiB;
  int64_t m = builder.add(managed);
  MemcpyRow prefetch;
  prefetch.kind = CopyKind::Prefetch;
  prefetch.bytes = 4 * kMiB;
  prefetch.src_address = prefetch.dst_address = managed.address;
  prefetch.src_alloc_id = prefetch.dst_alloc_id = m;
  prefetch.src_memory = prefetch.dst_memory = MemoryKind::Managed;
  prefetch.dst_device = 0;
  prefetch.api_start_ns = 900;
  builder.add(prefetch);
  KernelRow kernel;
  kernel.demangled_name = "other(float*)";
  kernel.stream = 9;
  kernel.api_start_ns = 800;
  kernel.gpu_start_ns = 850;
  kernel.gpu_end_ns = 2000;
  builder.add(kernel);
  UmEventRow event;
  event.alloc_id = m;
  event.address = managed.address;
  event.dst_device = 0;
  event.start_ns = 1000;
  event.end_ns = 1100;
  event.bytes = event.value = 4 * kMiB;
  event.cause = static_cast<int64_t>(UmMigrationCause::User);
  builder.add(event);
  event.address = managed.address + 4 * kMiB;
  event.start_ns = 1200;
  event.end_ns = 1300;
  event.bytes = event.value = 1 * kMiB;
  event.cause = static_cast<int64_t>(UmMigrationCause::Prefetch);  // the driver's, in a fault
  builder.add(event);

  ReportOutput output = run_report(um_report, builder.db());
  ASSERT_EQ(output.tables.size(), 2u);
  const Table& allocations = output.tables[0];
  ASSERT_EQ(allocations.rows.size(), 1u);
  EXPECT_EQ(integer(allocations, 0, "htod_bytes"), 5 * kMiB);
  EXPECT_EQ(integer(allocations, 0, "prefetch_bytes"), 4 * kMiB);
  const Table& kernels = output.tables[1];
  ASSERT_EQ(kernels.rows.size(), 1u);
  EXPECT_EQ(integer(kernels, 0, "bytes_in"), 1 * kMiB);
}

// Where the GPU can fault on pageable memory (HMM), malloc'd memory migrates
// too: it is listed with its kind. A record naming an allocation the trace
// does not have joins the unknown region.
TEST(UmReportRegions, PageableMemoryIsListedAndDanglingRecordsAreNotDropped) {
  TraceBuilder builder;
  AllocationRow pageable;
  pageable.kind = AllocKind::PageableHost;
  pageable.address = 0x10000000;
  pageable.bytes = 8 * kMiB;
  pageable.device.reset();
  int64_t p = builder.add(pageable);
  UmEventRow event;
  event.alloc_id = p;
  event.address = 0x10000000;
  event.bytes = event.value = kMiB;
  event.dst_device = 0;
  event.start_ns = 100;
  event.cause = 2;
  builder.add(event);
  event.alloc_id = 99;  // no such allocation
  event.address = 0x20000000;
  event.bytes = event.value = 4096;
  builder.add(event);
  ReportOutput output = run_report(um_report, builder.db());
  ASSERT_EQ(output.tables.size(), 2u);
  const Table& table = output.tables[0];
  ASSERT_EQ(table.rows.size(), 2u);
  EXPECT_EQ(integer(table, 0, "allocation"), p);
  EXPECT_EQ(text(table, 0, "kind"), "pageable host");
  EXPECT_TRUE(is_null(table, 0, "device"));
  EXPECT_EQ(integer(table, 0, "htod_bytes"), kMiB);
  EXPECT_EQ(text(table, 1, "allocation"), "unknown managed region");
  EXPECT_EQ(text(table, 1, "address"), "0x20000000-0x20001000");
  EXPECT_EQ(integer(table, 1, "htod_bytes"), 4096);
}

// Through the real binary: a note on stderr (stdout stays parseable), exit 0.
class UmReportCommand : public ::testing::Test {
 protected:
  void SetUp() override {
    base_ = scratch_ / "um_report";
  }

  struct Run {
    int exit_code;
    std::string out, err;
  };
  Run stats(const std::string& arguments) {
    std::string command = std::string(APPTRACER_BIN) + " stats " + base_ + ".db " + arguments +
                          " >" + base_ + ".out 2>" + base_ + ".err";
    int status = std::system(command.c_str());
    auto read = [](const std::string& path) {
      std::ifstream in(path);
      return std::string(std::istreambuf_iterator<char>(in), {});
    };
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, read(base_ + ".out"),
            read(base_ + ".err")};
  }

  ScratchDir scratch_;
  std::string base_;
};

TEST_F(UmReportCommand, ATraceWithoutUnifiedMemoryGetsOneNote) {
  {
    TraceBuilder builder(base_ + ".db");
    AllocationRow device;
    device.address = 0x7f0000000000;
    device.bytes = 4096;
    builder.add(device);
    builder.add(KernelRow{});
  }
  Run run = stats("--report um");
  EXPECT_EQ(run.exit_code, 0);
  EXPECT_EQ(run.out, "");
  EXPECT_EQ(run.err,
            "note: no unified memory in this trace: no managed allocations, migrations, faults, "
            "prefetches or advice\n");
  // Not asked for by name, it says nothing and adds no table.
  run = stats("--format json");
  EXPECT_EQ(run.exit_code, 0);
  EXPECT_EQ(run.err, "");
  EXPECT_FALSE(nlohmann::json::parse(run.out).contains("um_allocations"));
}

TEST_F(UmReportCommand, PrintsBothTablesInEveryFormat) {
  {
    TraceBuilder builder(base_ + ".db");
    add_um_scenario(builder);
  }
  Run run = stats("--report um --format json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  nlohmann::json document = nlohmann::json::parse(run.out);
  EXPECT_EQ(document["um_allocations"][0]["htod_bytes"], 67108864);
  EXPECT_EQ(document["um_allocations"][2]["allocation"], "unknown managed region");
  EXPECT_EQ(document["um_kernels"][0]["later_mean_ns"], 100.0);
  run = stats("--report um");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("== um_allocations =="), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("== um_kernels =="), std::string::npos) << run.out;
  run = stats("--report um --format csv");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("# um_kernels\r\nname,launches,bytes_in,first_ns,later_mean_ns,"),
            std::string::npos)
      << run.out;
}

// Schema version 1: um_events and mem_advice lack the columns the report reads.
TEST_F(UmReportCommand, AVersionOneTraceIsTooOldForTheReportButNotForTheOthers) {
  {
    TraceBuilder builder(base_ + ".db");
    add_um_scenario(builder);
    builder.db().exec(
        "ALTER TABLE um_events DROP COLUMN cause; ALTER TABLE mem_advice DROP COLUMN stream; "
        "UPDATE meta SET value = '1' WHERE key = 'schema_version'");
  }
  Run run = stats("--report um");
  EXPECT_EQ(run.exit_code, 0);
  EXPECT_EQ(run.err,
            "note: trace schema version 1 is too old for the um report (it needs version 2); "
            "record the program again\n");
  run = stats("--format csv");
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("# kernels"), std::string::npos);
}

}  // namespace
}  // namespace apptracer::testing
