// `apptracer whatif` as a user runs it: text and JSON output, storing only
// when asked, and one clear line for every way its inputs can be wrong.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "command_runner.h"
#include "whatif_fixture.h"

namespace apptracer::whatif {
namespace {

using dvdg::CommandOutput;
using dvdg::read_file;
using dvdg::run_apptracer;

class Command : public WhatifTest {
 public:
  // The chain of replay_test.cpp: 4040 ns recorded, 2540 predicted.
  void SetUp() override {
    WhatifTest::SetUp();
    write_system({"HtoD.pinned.node0.gpu0 0 2", "DtoH.pinned.node0.gpu0 0 2"});
    Copy htod{CopyKind::HtoD, MemoryKind::Pinned, 1000};
    copy(call("cudaMemcpyAsync", 100, 110), htod, 100, 120, 1120);
    kernel(call("cudaLaunchKernel", 130, 140), 130, 1125, 2125);
    Copy dtoh{CopyKind::DtoH, MemoryKind::Pinned, 2000};
    copy(call("cudaMemcpyAsync", 150, 160), dtoh, 150, 2130, 4130);
    sync(call("cudaDeviceSynchronize", 170, 4140), SyncKind::Device, 170, 4140);
    trace_.reset();
  }

  int64_t count(const std::string& sql) {
    Database db(trace_path_, Database::Mode::ReadOnly);
    Statement query = db.prepare(sql);
    return query.step() ? query.int64(0) : -1;
  }

  // Exactly one line on stderr, starting "apptracer: ", saying `says`.
  void expect_one_line_error(const std::string& arguments, const std::string& says) {
    CommandOutput result = run_apptracer("whatif " + arguments);
    EXPECT_NE(result.exit_code, 0);
    EXPECT_EQ(result.err.rfind("apptracer: ", 0), 0u) << result.err;
    EXPECT_NE(result.err.find(says), std::string::npos) << result.err;
    ASSERT_FALSE(result.err.empty());
    EXPECT_EQ(result.err.find('\n'), result.err.size() - 1) << result.err;
    EXPECT_TRUE(result.out.empty()) << result.out;
  }
};

TEST_F(Command, PrintsTotalsPhasesTransfersAndTheCriticalPath) {
  CommandOutput result = run_apptracer("whatif " + trace_path_ + " --system " + system_path_ + " --pin");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  for (const char* says : {"what-if:  --pin", "total", "period 1 (until cudaDeviceSynchronize)",
                           "HtoD.pinned.node0.gpu0", "critical path of the what-if", "recorded on tracehost"}) {
    EXPECT_NE(result.out.find(says), std::string::npos) << says << "\n" << result.out;
  }
}

TEST_F(Command, LeavesTheTraceUntouchedUnlessAskedToStore) {
  std::string before = read_file(trace_path_);
  CommandOutput result = run_apptracer("whatif " + trace_path_ + " --system " + system_path_);
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(read_file(trace_path_), before);
}

TEST_F(Command, StoresRunsReplacingTheSameOne) {
  std::string command = "whatif " + trace_path_ + " --system " + system_path_ + " --store";
  ASSERT_EQ(run_apptracer(command).exit_code, 0);
  ASSERT_EQ(run_apptracer(command).exit_code, 0);
  EXPECT_EQ(count("SELECT count(*) FROM whatif_runs"), 1);
  EXPECT_EQ(count("SELECT predicted_ns FROM whatif_runs"), 2540);
  EXPECT_EQ(count("SELECT count(*) FROM whatif_critical_path"), 5);
  EXPECT_EQ(count("SELECT count(*) FROM whatif_transfers"), 2);
  EXPECT_EQ(count("SELECT count(*) FROM whatif_phases"), 2);
  ASSERT_EQ(run_apptracer(command + " --pin").exit_code, 0);
  EXPECT_EQ(count("SELECT count(*) FROM whatif_runs"), 2);
  EXPECT_EQ(count("SELECT count(*) FROM whatif_runs WHERE changes = '--pin'"), 1);
  // The tables describe themselves like every other table of the trace.
  EXPECT_EQ(count("SELECT count(*) FROM schema_tables WHERE role = 'analysis' AND name LIKE 'whatif_%'"), 4);
  EXPECT_EQ(count("SELECT count(*) FROM schema_columns WHERE table_name = 'whatif_runs'"), 9);
}

TEST_F(Command, WritesJson) {
  CommandOutput result =
      run_apptracer("whatif " + trace_path_ + " --system " + system_path_ + " --format json --overlap");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  nlohmann::json json = nlohmann::json::parse(result.out);
  EXPECT_EQ(json["recorded_ns"], 4040);
  EXPECT_EQ(json["baseline_ns"], 2540);
  EXPECT_EQ(json["changes"][0], "--overlap");
  EXPECT_EQ(json["phases"][0]["name"], "period 1");
  EXPECT_EQ(json["critical_path"]["steps"].size(), 5u);
  EXPECT_EQ(json["transfers"][1]["whatif_by"], "DtoH.pinned.node0.gpu0");
}

// --checkpoint alone asks about memory: no system file needed. The kernel
// (1000 ns) and the DtoH copy (2000 ns) were issued in the forward of
// "net", beside 4 KiB of device memory.
TEST_F(Command, ACheckpointAloneNeedsNoSystemFile) {
  {
    Database db(trace_path_, Database::Mode::ReadWrite);
    db.exec("INSERT INTO strings(text) VALUES ('net')");
    testing::FrameworkRangeRow net;
    net.kind = FrameworkRangeKind::Module;
    net.start_ns = 120;
    net.end_ns = 200;
    net.name_id = db.last_insert_rowid();
    RowInserter<apptracer::FrameworkRangeRow>(db).insert(net);
    testing::AllocationRow memory;
    memory.address = 0x7f0000000000;
    memory.bytes = 4096;
    RowInserter<apptracer::AllocationRow>(db).insert(memory);
  }
  CommandOutput result = run_apptracer("whatif " + trace_path_ + " --checkpoint net --format json");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  auto json = nlohmann::json::parse(result.out);
  EXPECT_FALSE(json.contains("phases"));
  EXPECT_EQ(json["checkpoint"]["module"], "net");
  ASSERT_EQ(json["checkpoint"]["devices"].size(), 1u);
  EXPECT_EQ(json["checkpoint"]["devices"][0]["recompute_ns_per_step"], 1000 + 2000);
  EXPECT_EQ(json["checkpoint"]["devices"][0]["peak_live_bytes"], 4096);
  EXPECT_EQ(json["checkpoint"]["devices"][0]["peak_if_checkpointed"], 4096);
  CommandOutput text = run_apptracer("whatif " + trace_path_ + " --checkpoint net");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  for (const char* says : {"memory if net's activations were recomputed", "peak_if_checkpointed", "GPU 0"}) {
    EXPECT_NE(text.out.find(says), std::string::npos) << says << "\n" << text.out;
  }
  EXPECT_EQ(text.out.find("critical path"), std::string::npos) << text.out;
}

TEST_F(Command, NeitherASystemFileNorACheckpointIsOneLine) {
  expect_one_line_error(trace_path_, "give --system FILE");
  expect_one_line_error(trace_path_ + " --pin --checkpoint net", "give --system FILE");
}

TEST_F(Command, ACheckpointWithoutFrameworkContextIsOneLine) {
  expect_one_line_error(trace_path_ + " --checkpoint net", "no framework context");
}

TEST_F(Command, AMissingSystemFileIsOneLine) {
  expect_one_line_error(trace_path_ + " --system /nonexistent/system.json",
                        "/nonexistent/system.json: no such system file; measure this machine with 'apptracer links");
}

TEST_F(Command, AMalformedSystemFileIsOneLine) {
  std::ofstream(system_path_) << "{\"format\": \"apptracer system\", \"paths\": [";
  expect_one_line_error(trace_path_ + " --system " + system_path_, system_path_ + ": not valid JSON");
}

TEST_F(Command, ABadLinkChangeIsOneLine) {
  expect_one_line_error(trace_path_ + " --system " + system_path_ + " --link HtoD=fast", "--link HtoD=fast");
  expect_one_line_error(trace_path_ + " --system " + system_path_ + " --link NVLink=bw:9", "--link NVLink");
}

TEST_F(Command, ATraceWithoutTheNeededTablesIsOneLine) {
  std::remove(trace_path_.c_str());
  {
    Database db(trace_path_, Database::Mode::Create);
    db.exec("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);"
            "INSERT INTO meta VALUES ('schema_version', '3');"
            "CREATE TABLE api_calls (id INTEGER PRIMARY KEY);");
  }
  expect_one_line_error(trace_path_ + " --system " + system_path_,
                        trace_path_ + ": no kernels table, so nothing to replay");
}

TEST_F(Command, AMergedTraceIsOneLine) {
  {
    Database db(trace_path_, Database::Mode::ReadWrite);
    db.exec("CREATE TABLE processes (process_id INTEGER PRIMARY KEY)");
  }
  expect_one_line_error(trace_path_ + " --system " + system_path_, "a merged trace; whatif replays one process");
}

// A launch whose times were all lost sorts first on its stream, before a
// synchronous copy its call came after: a circle no replay can order. The
// error names the trace.
TEST_F(Command, CircularDependenciesAreOneLineNamingTheTrace) {
  std::remove(trace_path_.c_str());
  trace_ = std::make_unique<testing::TraceBuilder>(trace_path_);
  trace_->add_device(testing::DeviceRow());
  Copy synchronous{CopyKind::HtoD, MemoryKind::Pageable, 1000, /*async=*/false};
  copy(call("cudaMemcpy", 2000, 3000), synchronous, 2000, 2100, 2600);
  kernel(call("cudaLaunchKernel", 3500, 3600), 3500, 3700, 3800);
  trace_->db().exec("UPDATE kernels SET api_start_ns = NULL, gpu_start_ns = NULL, gpu_end_ns = NULL");
  trace_.reset();
  expect_one_line_error(trace_path_ + " --system " + system_path_,
                        trace_path_ + ": its dependencies are circular, so it cannot be replayed");
}

TEST_F(Command, ATraceWithNothingToReplayIsOneLine) {
  std::remove(trace_path_.c_str());
  testing::TraceBuilder empty(trace_path_);
  expect_one_line_error(trace_path_ + " --system " + system_path_, "nothing to replay");
}

}  // namespace
}  // namespace apptracer::whatif
