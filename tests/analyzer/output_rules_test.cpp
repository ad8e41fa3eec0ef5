// The rules every command that writes a file follows (analyzer/output_file.h),
// end to end through the real binary: never an input, never an existing file
// without --force, a finished file or none, devices, FIFOs and symlinks kept.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <thread>

#include "command_runner.h"
#include "sample_trace.h"
#include "scratch_dir.h"

namespace apptracer::testing {
namespace {

using CommandRun = dvdg::CommandOutput;
using dvdg::read_file;

class OutputRules : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = scratch_.path();
    trace_ = dir_ + "/t.db";
    TraceBuilder builder(trace_);
    build_sample_trace(builder);
  }

  CommandRun apptracer(const std::string& arguments) { return dvdg::run_apptracer(arguments); }

  // A failure is one line on stderr and a non-zero exit.
  void expect_one_line_error(const CommandRun& run, const std::string& says) {
    EXPECT_NE(run.exit_code, 0);
    EXPECT_NE(run.err.find(says), std::string::npos) << run.err;
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
  }

  // No temporary file is ever left in the directory.
  void expect_no_leftovers() {
    std::string listing = dir_ + "/listing";
    std::system(("ls -A " + dir_ + " > " + listing).c_str());
    EXPECT_EQ(read_file(listing).find(".tmp-"), std::string::npos) << read_file(listing);
  }

  // A copy of the bundled vector_add trace, which whatif can replay (the
  // sample trace's dependencies run in a circle).
  std::string replayable_trace() {
    std::string path = dir_ + "/vector_add.db";
    std::string bundled = read_file(std::string(APPTRACER_EXAMPLES) + "/vector_add.db");
    std::ofstream(path, std::ios::binary) << bundled;
    return path;
  }

  ScratchDir scratch_;
  std::string dir_;
  std::string trace_;
};

TEST_F(OutputRules, NoCommandWritesOverItsInputUnderAnyName) {
  std::string bytes = read_file(trace_);
  std::string link = dir_ + "/link.db";
  ASSERT_EQ(::link(trace_.c_str(), link.c_str()), 0);
  for (const std::string& arguments :
       {"dvdg --no-store " + trace_ + " --json " + trace_,
        "dvdg --no-store " + trace_ + " --force --dot " + dir_ + "/./t.db",
        "dvdg " + trace_ + " --force --proto " + link,
        "timeline " + trace_ + " --force -o " + link,
        "merge " + trace_ + " --force -o " + dir_ + "/../" + dir_.substr(dir_.rfind('/') + 1) + "/t.db"}) {
    expect_one_line_error(apptracer(arguments), "input");
    EXPECT_EQ(read_file(trace_), bytes) << arguments;
  }
  expect_no_leftovers();
}

// A system file is an input like the trace: no output replaces it, under its
// own name, a symbolic link or a hard link.
TEST_F(OutputRules, NoCommandWritesOverTheSystemFileItReads) {
  std::string system = dir_ + "/s.json";
  std::ofstream(system) << R"({"format": "apptracer system", "version": 1, "machine": {}, "paths": [)"
                        << R"({"name": "HtoD.pinned.node0.gpu0", "model": {"latency_ns": 1000,)"
                        << R"( "bandwidth": [{"bytes": 1, "gbps": 10}]}}]})";
  std::string bytes = read_file(system);
  std::string symbolic = dir_ + "/symbolic.json";
  std::string hard = dir_ + "/hard.json";
  ASSERT_EQ(symlink(system.c_str(), symbolic.c_str()), 0);
  ASSERT_EQ(::link(system.c_str(), hard.c_str()), 0);
  std::string trace = replayable_trace();
  ASSERT_EQ(apptracer("whatif " + trace + " --system " + system).exit_code, 0) << "a valid system file";
  for (const std::string& arguments :
       {"whatif " + trace + " --system " + system + " --format json -o " + system + " -f",
        "whatif " + trace + " --system " + symbolic + " --format json -o " + system + " -f",
        "whatif " + trace + " --system " + system + " --system2 " + hard + " --format json -o " + hard + " -f",
        "report " + trace + " --system " + system + " -o " + system + " -f",
        "report " + trace + " --system " + system + " -o " + symbolic + " -f",
        "report " + trace + " --system " + hard + " -o " + dir_ + "/./s.json -f"}) {
    expect_one_line_error(apptracer(arguments), "input");
    EXPECT_EQ(read_file(system), bytes) << arguments;
  }
  expect_no_leftovers();
}

TEST_F(OutputRules, StandardOutputAppendedToAnInputIsRefused) {
  std::string system = dir_ + "/s.json";
  std::ofstream(system) << R"({"format": "apptracer system", "version": 1, "machine": {}, "paths": []})";
  std::string bytes = read_file(trace_);
  std::string system_bytes = read_file(system);
  for (const std::string& arguments :
       {"dvdg --no-store " + trace_ + " --json - >>" + trace_, "stats " + trace_ + " >>" + trace_,
        "query " + trace_ + " 'SELECT 1' >>" + trace_, "info " + trace_ + " >>" + trace_,
        "diagnose " + trace_ + " --system " + system + " >>" + system,
        "whatif " + trace_ + " --system " + system + " --format json >>" + system}) {
    std::string command = std::string(APPTRACER_BIN) + " " + arguments + " 2>" + dir_ + "/err";
    EXPECT_NE(std::system(command.c_str()), 0) << arguments;
    EXPECT_EQ(read_file(trace_), bytes) << arguments;
    EXPECT_EQ(read_file(system), system_bytes) << arguments;
    EXPECT_NE(read_file(dir_ + "/err").find("standard output: is the input"), std::string::npos)
        << arguments << ": " << read_file(dir_ + "/err");
  }
}

TEST_F(OutputRules, AnExistingFileIsReplacedOnlyWithForce) {
  for (const std::string& command : {std::string("dvdg --no-store ") + trace_ + " --json",
                                     std::string("dvdg --no-store ") + trace_ + " --dot",
                                     std::string("timeline ") + trace_ + " -o",
                                     std::string("merge ") + trace_ + " -o"}) {
    std::string out = dir_ + "/existing";
    std::ofstream(out) << "keep";
    expect_one_line_error(apptracer(command + " " + out), "already exists; use --force");
    EXPECT_EQ(read_file(out), "keep") << command;
    CommandRun forced = apptracer(command + " " + out + " --force");
    EXPECT_EQ(forced.exit_code, 0) << command << ": " << forced.err;
    EXPECT_NE(read_file(out), "keep") << command;
    std::remove(out.c_str());
  }
  expect_no_leftovers();
}

TEST_F(OutputRules, AFailedRunLeavesTheOldFileWhole) {
  std::string out = dir_ + "/old.pftrace";
  std::ofstream(out) << "old timeline";
  // The timeline fails half way: memsets are of a process the trace does
  // not list (it names none, so its rows are process 1's).
  std::string broken = dir_ + "/broken.db";
  std::ofstream(broken, std::ios::binary) << read_file(trace_);
  Database(broken, Database::Mode::ReadWrite)
      .exec("ALTER TABLE memsets ADD COLUMN process_id INTEGER; UPDATE memsets SET process_id = 7");
  CommandRun run = apptracer("timeline " + broken + " --force -o " + out);
  expect_one_line_error(run, broken);
  EXPECT_EQ(read_file(out), "old timeline");
  expect_no_leftovers();
}

TEST_F(OutputRules, DevicesAreWrittenThroughNeverReplaced) {
  CommandRun run = apptracer("timeline " + trace_ + " -o /dev/null");
  EXPECT_EQ(run.exit_code, 0) << run.err;
  struct stat info {};
  ASSERT_EQ(stat("/dev/null", &info), 0);
  EXPECT_TRUE(S_ISCHR(info.st_mode));
  if (access("/dev/full", W_OK) == 0) {
    expect_one_line_error(apptracer("timeline " + trace_ + " -o /dev/full"), "write failed");
    expect_one_line_error(apptracer("dvdg --no-store " + trace_ + " --json /dev/full"), "write failed");
    ASSERT_EQ(stat("/dev/full", &info), 0);
    EXPECT_TRUE(S_ISCHR(info.st_mode));
  }
}

TEST_F(OutputRules, AFifoIsWrittenThroughAndStaysAFifo) {
  std::string fifo = dir_ + "/fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  std::string received;
  std::thread reader([&] { received = read_file(fifo); });
  CommandRun run = apptracer("dvdg --no-store " + trace_ + " --json " + fifo);
  reader.join();
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(received.find("\"edges\""), std::string::npos) << received;
  struct stat info {};
  ASSERT_EQ(lstat(fifo.c_str(), &info), 0);
  EXPECT_TRUE(S_ISFIFO(info.st_mode));
}

TEST_F(OutputRules, ASymlinkStaysAndItsTargetIsReplaced) {
  std::string target = dir_ + "/target.json";
  std::string link = dir_ + "/link.json";
  std::ofstream(target) << "old";
  ASSERT_EQ(symlink(target.c_str(), link.c_str()), 0);
  CommandRun run = apptracer("timeline " + trace_ + " --format chrome-json --force -o " + link);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  struct stat info {};
  ASSERT_EQ(lstat(link.c_str(), &info), 0);
  EXPECT_TRUE(S_ISLNK(info.st_mode));
  EXPECT_NE(read_file(target).find("traceEvents"), std::string::npos);
  expect_no_leftovers();
}

TEST_F(OutputRules, MergingOneTraceTwiceIsRefused) {
  std::string merged = dir_ + "/merged.db";
  expect_one_line_error(apptracer("merge " + trace_ + " " + trace_ + " -o " + merged), "same file");
  expect_one_line_error(apptracer("merge " + trace_ + " " + dir_ + "/./t.db -o " + merged),
                        "same file");
  EXPECT_NE(access(merged.c_str(), F_OK), 0);
}

TEST_F(OutputRules, WriteErrorsOnStandardOutputFailTheCommand) {
  if (access("/dev/full", W_OK) != 0) GTEST_SKIP() << "no /dev/full";
  for (const std::string& command : {"stats " + trace_, "info " + trace_,
                                     "query " + trace_ + " 'SELECT * FROM api_calls'",
                                     "dvdg --no-store " + trace_}) {
    std::string line = std::string(APPTRACER_BIN) + " " + command + " >/dev/full 2>" + dir_ + "/err";
    int status = std::system(line.c_str());
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) != 0) << command;
    std::string err = read_file(dir_ + "/err");
    EXPECT_NE(err.find("writing standard output failed"), std::string::npos) << command << ": " << err;
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  }
}

// `apptracer ... | head -1`: a reader that went away ends the command at its
// next write, quietly and with status 0, as it ends `cat` (not SIGPIPE, 141).
TEST_F(OutputRules, AReaderThatWentAwayEndsEveryCommandQuietly) {
  std::string system = dir_ + "/s.json";
  std::ofstream(system) << R"({"format": "apptracer system", "version": 1, "machine": {}, "paths": []})";
  std::string replayable = replayable_trace();
  for (const std::string& arguments :
       {"stats " + trace_, "stats " + trace_ + " --format csv", "info " + trace_,
        "query " + trace_ + " 'SELECT * FROM api_calls'",
        "query " + trace_ + " 'WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n) "
                            "SELECT x FROM n'",
        "dvdg --no-store " + trace_, "dvdg --no-store " + trace_ + " --json -",
        "timeline " + trace_ + " -o -", "diagnose " + trace_ + " --analyses",
        "whatif " + replayable + " --system " + system + " --format json", std::string("schema")}) {
    // Standard output is a pipe whose read end is closed before the command starts.
    int ends[2];
    ASSERT_EQ(pipe(ends), 0);
    close(ends[0]);
    pid_t child = fork();
    if (child == 0) {
      dup2(ends[1], STDOUT_FILENO);
      std::string command = std::string(APPTRACER_BIN) + " " + arguments + " 2>" + dir_ + "/err";
      execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    close(ends[1]);
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
        << arguments << ": status " << status << ", " << read_file(dir_ + "/err");
    EXPECT_EQ(read_file(dir_ + "/err"), "") << arguments;
  }
}

}  // namespace
}  // namespace apptracer::testing
