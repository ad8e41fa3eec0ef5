// `apptracer diagnose` end to end on the bundled H100 traces: formats, the
// stored tables, and one-line errors.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "apptracer/sqlite.h"
#include "scratch_dir.h"

namespace {

using apptracer::testing::ScratchDir;

struct Output {
  int status;
  std::string out;
};

Output run(const std::string& arguments) {
  std::string command = std::string(APPTRACER_BIN) + " " + arguments + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  std::string out;
  std::array<char, 4096> buffer{};
  while (size_t n = fread(buffer.data(), 1, buffer.size(), pipe)) out.append(buffer.data(), n);
  int status = pclose(pipe);
  return {WEXITSTATUS(status), out};
}

// A copy in the test's own directory.
std::string copy_example(const ScratchDir& scratch, const std::string& name) {
  std::string path = scratch / name;
  std::ifstream in(std::string(APPTRACER_EXAMPLES) + "/" + name, std::ios::binary);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << in.rdbuf();
  return path;
}

TEST(DiagnoseCommand, VectorAddInJson) {
  ScratchDir scratch;
  std::string trace = copy_example(scratch, "vector_add.db");
  Output r = run("diagnose " + trace + " --json");
  ASSERT_EQ(r.status, 0) << r.out;
  nlohmann::json doc = nlohmann::json::parse(r.out);
  EXPECT_NE(doc["link_model"].get<std::string>().find("measured in the trace"), std::string::npos);
  std::set<std::string> rules;
  for (const auto& f : doc["findings"]) {
    rules.insert(f["rule"].get<std::string>());
    EXPECT_TRUE(f.contains("where") && f["where"].contains("rows"));
    EXPECT_FALSE(f["fix"].get<std::string>().empty());
  }
  // Three synchronous cudaMemcpy of std::vector memory.
  EXPECT_TRUE(rules.count("pageable_copy")) << r.out;
  EXPECT_TRUE(rules.count("sync_copy")) << r.out;
}

// Times count from the trace's start (meta start_ns), as the Python API's
// do, and every output says so.
TEST(DiagnoseCommand, SaysWhatItsTimesCountFrom) {
  ScratchDir scratch;
  std::string trace = copy_example(scratch, "vector_add.db");
  std::string start;
  {
    apptracer::Database db(trace, apptracer::Database::Mode::ReadOnly);
    apptracer::Statement query = db.prepare("SELECT value FROM meta WHERE key = 'start_ns'");
    ASSERT_TRUE(query.step());
    start = query.text(0);
  }
  std::string origin = "times since the trace's start (meta start_ns " + start + ")";
  Output text = run("diagnose " + trace);
  ASSERT_EQ(text.status, 0) << text.out;
  EXPECT_NE(text.out.substr(0, text.out.find('\n')).find(origin), std::string::npos) << text.out;
  Output json = run("diagnose " + trace + " --json");
  ASSERT_EQ(json.status, 0) << json.out;
  EXPECT_EQ(nlohmann::json::parse(json.out)["time_origin"], origin);
}

TEST(DiagnoseCommand, StoreWritesTheDeclaredTables) {
  ScratchDir scratch;
  std::string trace = copy_example(scratch, "um_bandwidth_h100.db");
  Output r = run("diagnose " + trace + " --store");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("[um_on_demand_migration]"), std::string::npos) << r.out;
  {
    apptracer::Database db(trace, apptracer::Database::Mode::ReadOnly);
    apptracer::Statement q = db.prepare(
        "SELECT count(*) FROM diagnoses d JOIN diagnosis_rows r ON r.diagnosis_id = d.id "
        "WHERE d.rule = 'um_on_demand_migration' AND r.table_name = 'um_events'");
    ASSERT_TRUE(q.step());
    EXPECT_GT(q.int64(0), 0);
  }
  // Stored again: replaced, not appended.
  ASSERT_EQ(run("diagnose " + trace + " --store").status, 0);
  apptracer::Database db(trace, apptracer::Database::Mode::ReadOnly);
  apptracer::Statement twice = db.prepare("SELECT count(*), count(DISTINCT rule || what) FROM diagnoses");
  ASSERT_TRUE(twice.step());
  EXPECT_EQ(twice.int64(0), twice.int64(1));
}

TEST(DiagnoseCommand, CsvAndAnalyses) {
  ScratchDir scratch;
  std::string trace = copy_example(scratch, "vector_add.db");
  Output r = run("diagnose " + trace + " --csv --analyses");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("rule,what,names,nvtx_range,call_site,framework,rows,cost_ns,saving_ns"),
            std::string::npos)
      << r.out;
  for (const char* table : {"temporal_breakdown", "idle_breakdown", "kernel_breakdown",
                            "launch_statistics", "copy_compute_overlap", "memory_bandwidth",
                            "queue_length", "kernel_sequences"}) {
    EXPECT_NE(r.out.find(table), std::string::npos) << table;
  }
}

// People read kernels by their short names in aligned tables (a foreach
// optimizer's kernels share their first 100 characters); CSV keeps them whole.
TEST(DiagnoseCommand, TablesShowKernelsByTheirShortNames) {
  ScratchDir scratch;
  std::string trace = copy_example(scratch, "pytorch_train.db");
  const std::string shown = "at::native::(anonymous namespace)::multi_tensor_apply_kernel<BinaryOpScalarFunctor<float>>";
  const std::string whole = "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::";
  for (const std::string& command : {"stats " + trace + " -r kernels", "diagnose " + trace + " --analyses"}) {
    Output text = run(command);
    ASSERT_EQ(text.status, 0) << text.out;
    EXPECT_NE(text.out.find(shown), std::string::npos) << command << text.out;
    EXPECT_EQ(text.out.find(whole), std::string::npos) << command;
    Output csv = run(command + " --csv");
    ASSERT_EQ(csv.status, 0) << csv.out;
    EXPECT_NE(csv.out.find(whole), std::string::npos) << command;
  }
}

// Every output says how many findings it left out; --all leaves out none.
TEST(DiagnoseCommand, SaysHowManyFindingsItLeftOut) {
  ScratchDir scratch;
  std::string trace = copy_example(scratch, "vector_add.db");
  for (const char* all : {"", " --all"}) {
    Output json = run("diagnose " + trace + " --json" + all);
    ASSERT_EQ(json.status, 0) << json.out;
    EXPECT_EQ(nlohmann::json::parse(json.out)["left_out"], 0) << all;
    // -o's extension says CSV; the count goes to standard error.
    std::string csv_path = scratch / (std::string("findings") + all + ".csv");
    Output csv = run("diagnose " + trace + all + " -o '" + csv_path + "'");
    ASSERT_EQ(csv.status, 0) << csv.out;
    EXPECT_NE(csv.out.find(" finding(s) listed"), std::string::npos) << csv.out;
    // Plain CSV: the header first, no comment line.
    std::ifstream file(csv_path);
    std::string written((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    EXPECT_EQ(written.rfind("rule,what,", 0), 0u) << written;
    EXPECT_EQ(written.find("\n#"), std::string::npos) << written;
  }
}

TEST(DiagnoseCommand, ABadSystemFileIsOneLine) {
  ScratchDir scratch;
  std::string trace = copy_example(scratch, "vector_add.db");
  std::string system = scratch / "bad_system.json";
  std::ofstream(system) << "{\"paths\": 1}";
  Output r = run("diagnose " + trace + " --system " + system);
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, "apptracer: " + system +
                       ": not an apptracer system file (no \"format\": \"apptracer system\"); "
                       "write one with 'apptracer links -o " + system + "'\n");
}

// The H100's unified-memory trace: one kernel faults 128 MiB in, then the
// same kernel runs four times on resident data. Its faults cost what the
// first run took beyond a resident one (58.1 ms), not just the 16.5 ms of
// transfers the migration records time.
TEST(DiagnoseCommand, FaultsCostTheFaultingKernelsStallOnTheH100) {
  ScratchDir scratch;
  std::string trace = copy_example(scratch, "um_bandwidth_h100.db");
  double stall = 0;
  {
    apptracer::Database db(trace, apptracer::Database::Mode::ReadOnly);
    apptracer::Statement query = db.prepare(
        "SELECT max(gpu_end_ns - gpu_start_ns) - min(gpu_end_ns - gpu_start_ns) FROM kernels");
    ASSERT_TRUE(query.step());
    stall = static_cast<double>(query.int64(0));
  }
  Output r = run("diagnose " + trace + " --json");
  ASSERT_EQ(r.status, 0) << r.out;
  nlohmann::json doc = nlohmann::json::parse(r.out);
  std::vector<double> costs;
  for (const auto& f : doc["findings"]) {
    if (f["rule"] == "um_on_demand_migration") costs.push_back(f["cost_ns"].get<double>());
  }
  ASSERT_EQ(costs.size(), 1u) << r.out;
  EXPECT_NEAR(costs[0], stall, 0.05 * stall);
}

TEST(DiagnoseCommand, ReadOnlyWithoutStore) {
  ScratchDir scratch;
  std::string trace = copy_example(scratch, "vector_add.db");
  ASSERT_EQ(run("diagnose " + trace).status, 0);
  apptracer::Database db(trace, apptracer::Database::Mode::ReadOnly);
  EXPECT_FALSE(db.has_table("diagnoses"));
}

}  // namespace
