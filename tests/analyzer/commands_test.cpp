// The four commands end to end through the real `apptracer` binary: output
// formats, exit codes, one-line errors.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>
#include <nlohmann/json.hpp>

#include "command_runner.h"
#include "sample_trace.h"
#include "scratch_dir.h"

namespace apptracer::testing {
namespace {

using CommandRun = dvdg::CommandOutput;
using dvdg::read_file;

class Commands : public ::testing::Test {
 protected:
  void SetUp() override {
    base_ = scratch_ / "commands_test";
    trace_ = base_ + ".db";
    TraceBuilder builder(trace_);
    build_sample_trace(builder);
  }

  CommandRun apptracer(const std::string& arguments) { return dvdg::run_apptracer(arguments); }

  ScratchDir scratch_;
  std::string base_;
  std::string trace_;
};

TEST_F(Commands, StatsPrintsOneReportAsCsv) {
  CommandRun run = apptracer("stats " + trace_ + " --report memsets --format csv");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out,
            "memory,count,bytes,time_ns,bandwidth_gbps,untimed\r\n"
            "device,2,5000,200,25.0,0\r\n");
}

TEST_F(Commands, StatsPrintsEveryReportAsJson) {
  CommandRun run = apptracer("stats " + trace_ + " --format json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  nlohmann::json document = nlohmann::json::parse(run.out);
  for (const char* report :
       {"processes", "api", "kernels", "copies", "memsets", "allocations", "buffers", "syncs", "streams"}) {
    EXPECT_TRUE(document.contains(report)) << report;
  }
  EXPECT_FALSE(document.contains("memory_timeline")) << "a row per allocation: only when asked for";
  EXPECT_EQ(document["kernels"][0]["total_ns"], 1300);
  EXPECT_TRUE(run.err.empty()) << run.err;  // stderr is no terminal: no progress
}

TEST_F(Commands, StatsTableHasAHeadingPerReport) {
  CommandRun run = apptracer("stats " + trace_ + " -r syncs -r copies");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("== copies =="), std::string::npos);
  EXPECT_NE(run.out.find("== syncs =="), std::string::npos);
  EXPECT_LT(run.out.find("== copies =="), run.out.find("== syncs =="));  // report order
}

TEST_F(Commands, QueryRefusesWritesWithOneLineAndNonZeroExit) {
  CommandRun run = apptracer("query " + trace_ + " \"DELETE FROM kernels\"");
  EXPECT_NE(run.exit_code, 0);
  EXPECT_NE(run.err.find("refused"), std::string::npos) << run.err;
  EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
  CommandRun count = apptracer("query " + trace_ + " \"SELECT count(*) AS n FROM kernels\" --format json");
  ASSERT_EQ(count.exit_code, 0) << count.err;
  EXPECT_EQ(nlohmann::json::parse(count.out)[0]["n"], 5);
}

// fts3_tokenizer('simple') returns the address of SQLite's tokenizer (and
// with a second argument installs one): refused before anything runs.
TEST_F(Commands, QueryRefusesFunctionsThatRevealAddresses) {
  for (const char* sql : {"SELECT fts3_tokenizer('simple')", "SELECT FTS3_TOKENIZER('simple', x'00')",
                          "SELECT length(fts3_tokenizer('porter')) FROM kernels"}) {
    CommandRun run = apptracer("query " + trace_ + " \"" + sql + "\"");
    EXPECT_NE(run.exit_code, 0) << sql << ": " << run.out;
    EXPECT_NE(run.err.find("refused: fts3_tokenizer() reads or sets memory addresses"), std::string::npos)
        << sql << ": " << run.err;
    EXPECT_EQ(run.out, "") << sql;
  }
}

// Temporary results (here a recursive query's set of rows, which never ends)
// are held in memory, bounded: the query stops with one line naming the
// bound instead of growing a hidden temporary file without end.
TEST_F(Commands, QueryTemporaryStorageIsBounded) {
  CommandRun run = apptracer("query " + trace_ +
                             " \"WITH RECURSIVE n(x) AS (SELECT 1 UNION SELECT x + 1 FROM n) "
                             "SELECT count(*) FROM n\" --memory-limit 16");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.err.find(trace_ + ": the query needs more than 16 MiB of memory"), std::string::npos)
      << run.err;
  EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
  CommandRun ordered = apptracer("query " + trace_ + " \"SELECT id FROM kernels ORDER BY gpu_start_ns\" "
                                 "--memory-limit 16 --format csv");
  EXPECT_EQ(ordered.exit_code, 0) << ordered.err;
}

// A memory limit out of range is one short line naming the range, never a
// shift that overflows into no limit at all.
TEST_F(Commands, QueryMemoryLimitOutOfRangeIsOneLine) {
  for (const char* limit : {"0", "-5", "16777217", "8796093022208", "99999999999999999999"}) {
    CommandRun run = apptracer("query " + trace_ + " 'SELECT 1' --memory-limit " + limit);
    EXPECT_NE(run.exit_code, 0) << limit;
    EXPECT_NE(run.err.find("give 1 to 16777216 MiB"), std::string::npos) << limit << ": " << run.err;
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
    EXPECT_LT(run.err.size(), 160u) << run.err;
  }
}

// A recursive query that never ends stops at --timeout with one line; the
// default bound is finite.
TEST_F(Commands, QueryStopsAtItsTimeout) {
  auto started = std::chrono::steady_clock::now();
  CommandRun run = apptracer("query " + trace_ +
                             " \"WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n) "
                             "SELECT count(*) FROM n\" --timeout 1");
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.err.find(trace_ + ": the query ran past --timeout 1 s and was stopped"), std::string::npos)
      << run.err;
  EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
  EXPECT_LT(seconds, 30);
  CommandRun help = apptracer("query --help");
  EXPECT_NE(help.out.find("--timeout SECONDS"), std::string::npos) << help.out;
  EXPECT_NE(help.out.find("(default 600)"), std::string::npos) << help.out;
}

// ATTACH would make SQLite open another database its own way, creating its
// -shm beside a WAL database: refused before it runs, nothing created.
TEST_F(Commands, QueryRefusesAttachAndCreatesNoFile) {
  std::string other = scratch_ / "w.db";
  {
    Database db(other, Database::Mode::Create);
    db.exec("PRAGMA journal_mode = WAL; CREATE TABLE t (x); INSERT INTO t VALUES (1)");
  }
  for (const std::string& sql : {"ATTACH '" + other + "' AS x", "ATTACH DATABASE 'file:" + other + "' AS y"}) {
    CommandRun run = apptracer("query " + trace_ + " \"" + sql + "\"");
    EXPECT_NE(run.exit_code, 0) << sql;
    EXPECT_NE(run.err.find("refused: ATTACH"), std::string::npos) << run.err;
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
    EXPECT_NE(access((other + "-shm").c_str(), F_OK), 0) << sql << " created " << other << "-shm";
    EXPECT_NE(access((other + "-wal").c_str(), F_OK), 0) << sql << " created " << other << "-wal";
  }
}

// Names from the trace (kernels, NVTX ranges, the command line) reach a
// terminal with their control characters escaped; JSON and CSV quote them
// their own way and stay valid, invalid UTF-8 included.
TEST_F(Commands, ControlCharactersFromTheTraceAreEscapedOnTheTerminal) {
  {
    Database db(trace_, Database::Mode::ReadWrite);
    db.exec("UPDATE strings SET text = 'evil' || char(27) || '[2J' || char(13) || char(155) || 'name' "
            "WHERE id IN (SELECT demangled_id FROM kernels UNION SELECT name_id FROM nvtx_ranges);"
            "UPDATE meta SET value = 'app' || char(27) || ']0;title' || char(7) WHERE key = 'command_line';"
            "INSERT INTO strings(text) VALUES (CAST(x'41ff42' AS TEXT))");
  }
  for (const std::string& arguments :
       {"stats " + trace_, "stats " + trace_ + " -r kernels", "diagnose " + trace_ + " --analyses",
        "info " + trace_, "query " + trace_ + " 'SELECT text FROM strings'"}) {
    CommandRun run = apptracer(arguments);
    ASSERT_EQ(run.exit_code, 0) << arguments << ": " << run.err;
    for (const char* raw : {"\x1b", "\r", "\x07", "\xc2\x9b", "\xff"}) {
      EXPECT_EQ(run.out.find(raw), std::string::npos) << arguments << " printed a raw control character";
    }
    bool kernel_names = arguments.rfind("info", 0) != 0;
    EXPECT_NE(run.out.find(kernel_names ? "evil\\x1b[2J\\r\\u009bname" : "app\\x1b]0;title\\x07"),
              std::string::npos)
        << arguments << ":\n" << run.out;
  }
  for (const std::string& arguments :
       {"stats " + trace_ + " --format json", "diagnose " + trace_ + " --json --analyses",
        "query " + trace_ + " 'SELECT text FROM strings' --format json"}) {
    CommandRun run = apptracer(arguments);
    ASSERT_EQ(run.exit_code, 0) << arguments << ": " << run.err;
    EXPECT_NO_THROW(nlohmann::json::parse(run.out)) << arguments;
    EXPECT_NE(run.out.find("evil\\u001b[2J\\r"), std::string::npos) << arguments << ":\n" << run.out;
  }
  CommandRun csv = apptracer("query " + trace_ + " \"SELECT text FROM strings WHERE text LIKE 'evil%'\" "
                             "--format csv");
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_NE(csv.out.find("\"evil\x1b[2J\r\xc2\x9bname\""), std::string::npos) << "quoted: " << csv.out;
}

TEST_F(Commands, MissingTraceIsOneLineError) {
  CommandRun run = apptracer("stats " + base_ + "_missing.db");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.err.find("no such file"), std::string::npos) << run.err;
  EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
}

TEST_F(Commands, VersionPrintsTheProjectsVersion) {
  CommandRun run = apptracer("--version");
  EXPECT_EQ(run.exit_code, 0);
  EXPECT_EQ(run.out.rfind("apptracer ", 0), 0u) << run.out;
  EXPECT_NE(run.out.find('.'), std::string::npos) << run.out;
}

// A mistyped command says which one it probably was, in its one line.
TEST_F(Commands, AMistypedCommandGetsTheClosestOne) {
  for (const auto& [typed, meant] : std::vector<std::pair<std::string, std::string>>{
           {"stat", "stats"}, {"diagnoze", "diagnose"}, {"timelin", "timeline"}, {"merg", "merge"}}) {
    CommandRun run = apptracer(typed + " " + trace_);
    EXPECT_NE(run.exit_code, 0);
    EXPECT_NE(run.err.find("did you mean '" + meant + "'?"), std::string::npos) << run.err;
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
  }
  CommandRun far = apptracer("frobnicate " + trace_);
  EXPECT_EQ(far.err.find("did you mean"), std::string::npos) << far.err;
}

TEST_F(Commands, TimelineWritesPerfettoByDefaultAndChromeJsonOnRequest) {
  CommandRun run = apptracer("timeline " + trace_);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_FALSE(read_file(base_ + ".pftrace").empty());
  EXPECT_NE(run.err.find("9 tracks, 26 slices, 6 counter values, 5 flows (5 call->GPU, 0 DVDG; "
                         "no DVDG stored: --dvdg builds it)"),
            std::string::npos)
      << run.err;
  run = apptracer("timeline " + trace_ + " --format chrome-json -o " + base_ + ".json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_TRUE(nlohmann::json::parse(read_file(base_ + ".json")).contains("traceEvents"));
  run = apptracer("timeline " + trace_ + " -o " + trace_);
  EXPECT_NE(run.exit_code, 0);
  EXPECT_NE(run.err.find("is an input of this command"), std::string::npos) << run.err;
}

// A .json file of protobuf is read by no tool: -o's extension names the
// format, and a --format it contradicts is refused before anything is written.
TEST_F(Commands, TimelineFormatFollowsTheOutputsExtension) {
  CommandRun run = apptracer("timeline " + trace_ + " -o " + base_ + "_t.json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_TRUE(nlohmann::json::parse(read_file(base_ + "_t.json")).contains("traceEvents"));
  for (const char* extension : {".pftrace", ".perfetto-trace"}) {
    run = apptracer("timeline " + trace_ + " -o " + base_ + "_t" + extension);
    ASSERT_EQ(run.exit_code, 0) << run.err;
    std::string written = read_file(base_ + "_t" + extension);
    EXPECT_FALSE(written.empty());
    EXPECT_FALSE(nlohmann::json::accept(written)) << extension << ": Perfetto's protobuf";
  }
  run = apptracer("timeline " + trace_ + " --format chrome-json -o " + base_ + "_c.json");
  EXPECT_EQ(run.exit_code, 0) << run.err;
  run = apptracer("timeline " + trace_ + " --format perfetto -o " + base_ + "_p.json");
  EXPECT_EQ(run.exit_code, 2) << "a usage error";
  EXPECT_NE(run.err.find("names a chrome-json file but --format is perfetto"), std::string::npos)
      << run.err;
  EXPECT_NE(run.err.find(".pftrace"), std::string::npos) << run.err;
  EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
  EXPECT_FALSE(std::ifstream(base_ + "_p.json").good());
  run = apptracer("timeline " + trace_ + " --format chrome-json -o " + base_ + "_c.pftrace");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find(".json"), std::string::npos) << run.err;
}

// HTA's folder: a file per rank with the rank in it, whole microseconds (HTA
// rounds decimals itself, starts up and ends down); a merged job's ranks
// each their own file; another trace file in the folder is refused.
TEST_F(Commands, TimelineHtaWritesAFilePerRank) {
  std::string folder = base_ + "_hta";
  CommandRun run = apptracer("timeline " + trace_ + " --hta " + folder);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.err.find("for HTA (1 rank"), std::string::npos) << run.err;
  nlohmann::json one = nlohmann::json::parse(read_file(folder + "/rank0.json"));
  EXPECT_EQ(one["distributedInfo"]["rank"], 0);
  int slices = 0;
  for (const nlohmann::json& event : one["traceEvents"]) {
    if (event["ph"] != "X") continue;
    ++slices;
    EXPECT_TRUE(event["ts"].is_number_integer()) << event;
    EXPECT_GE(event["dur"].get<int64_t>(), 1) << "the sample's 100 ns operations keep 1 us: " << event;
  }
  EXPECT_EQ(slices, 26);
  run = apptracer("timeline " + trace_ + " --hta " + folder);
  EXPECT_NE(run.exit_code, 0);
  EXPECT_NE(run.err.find("already exists"), std::string::npos) << run.err;

  std::vector<std::string> ranks;
  for (int rank : {0, 1}) {
    ranks.push_back(base_ + "_rank" + std::to_string(rank) + ".db");
    TraceBuilder builder(ranks.back());
    build_sample_trace(builder);
    CommunicatorRow communicator;
    communicator.library = CommLibrary::Nccl;
    communicator.comm_id = 77;
    communicator.rank = 1 - rank;  // the order of the traces is not the ranks'
    communicator.nranks = 2;
    builder.add(communicator);
  }
  std::string merged = base_ + "_job.db";
  run = apptracer("merge " + ranks[0] + " " + ranks[1] + " -o " + merged);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  std::string job = base_ + "_job_hta";
  run = apptracer("timeline " + merged + " --hta " + job);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.err.find("for HTA (2 ranks)"), std::string::npos) << run.err;
  for (int rank : {0, 1}) {
    nlohmann::json document = nlohmann::json::parse(read_file(job + "/rank" + std::to_string(rank) + ".json"));
    EXPECT_EQ(document["distributedInfo"]["rank"], rank);
    EXPECT_EQ(document["distributedInfo"]["world_size"], 2);
    int rank_slices = 0;
    for (const nlohmann::json& event : document["traceEvents"]) rank_slices += event["ph"] == "X";
    EXPECT_EQ(rank_slices, 26) << "rank " << rank << " has its own process's slices";
  }

  std::string other = base_ + "_other_hta";
  run = apptracer("timeline " + trace_ + " --hta " + other);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  std::rename((other + "/rank0.json").c_str(), (other + "/old.json").c_str());
  run = apptracer("timeline " + trace_ + " --hta " + other + " --force");
  EXPECT_NE(run.exit_code, 0);
  EXPECT_NE(run.err.find("holds old.json, which HTA would read as a rank too"), std::string::npos)
      << run.err;
}

TEST_F(Commands, TimelineDrawsFlowsAlongTheGraphApptracerDvdgStores) {
  CommandRun run = apptracer("dvdg " + trace_);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  // HtoD copy -> vec_add (reads the copied buffer) -> DtoH copy (reads its output).
  run = apptracer("timeline " + trace_);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.err.find("7 flows (5 call->GPU, 2 DVDG; DVDG stored in the trace)"), std::string::npos)
      << run.err;
}

TEST_F(Commands, TimelineWithDvdgBuildsTheGraphInMemoryAndLeavesTheTraceAsItWas) {
  std::string before = read_file(trace_);
  CommandRun run = apptracer("timeline " + trace_ + " --dvdg");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.err.find("7 flows (5 call->GPU, 2 DVDG; DVDG built in memory, not stored)"),
            std::string::npos)
      << run.err;
  EXPECT_EQ(read_file(trace_), before);
}

TEST_F(Commands, MergeWritesOneTraceFromSeveral) {
  std::string merged = base_ + "_merged.db";
  std::string second = base_ + "_second.db";
  std::ofstream(second, std::ios::binary) << read_file(trace_);
  CommandRun run = apptracer("merge " + trace_ + " " + second + " -o " + merged);
  std::remove(second.c_str());
  ASSERT_EQ(run.exit_code, 0) << run.err;
  CommandRun count = apptracer("query " + merged + " \"SELECT count(*) FROM api_calls\" --format csv");
  EXPECT_EQ(count.out, "count(*)\r\n24\r\n");
  run = apptracer("merge " + trace_ + " -o " + merged);
  EXPECT_NE(run.exit_code, 0);
  EXPECT_NE(run.err.find("already exists"), std::string::npos) << run.err;
}

}  // namespace
}  // namespace apptracer::testing
