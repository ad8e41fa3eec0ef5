// A command stopped while it writes its output (Ctrl-C, kill, a closed
// terminal, Ctrl-\) leaves no temporary file beside the output, and ends by
// that signal as it would without apptracer's cleanup.
#include <gtest/gtest.h>
#include <dirent.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "scratch_dir.h"
#include "synthetic_trace.h"

namespace apptracer {
namespace {

// Large enough that writing its timeline or merging it takes seconds.
constexpr int64_t kLaunches = 100'000;

class StoppedWhileWriting : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    scratch_ = new testing::ScratchDir();
    bench::write_synthetic_trace(*scratch_ / "big.db", kLaunches, kLaunches / 10, /*api_calls=*/true);
  }
  static void TearDownTestSuite() {
    delete scratch_;
    scratch_ = nullptr;
  }

  // The names in the output directory.
  std::vector<std::string> output_directory() {
    std::vector<std::string> names;
    DIR* directory = opendir(out_.path().c_str());
    while (dirent* entry = directory ? readdir(directory) : nullptr) {
      std::string name = entry->d_name;
      if (name != "." && name != "..") names.push_back(name);
    }
    if (directory) closedir(directory);
    return names;
  }

  // Starts `apptracer ARGS`, waits until its temporary file is there, sends
  // `signal_number`; returns how it ended (waitpid's status).
  int stop_while_writing(const std::vector<std::string>& arguments, int signal_number) {
    std::vector<std::string> argv{APPTRACER_BIN};
    argv.insert(argv.end(), arguments.begin(), arguments.end());
    std::vector<char*> args;
    for (std::string& arg : argv) args.push_back(arg.data());
    args.push_back(nullptr);
    pid_t child = fork();
    if (child == 0) {
      // As a terminal would: the signals at their defaults, whatever the runner set.
      for (int each : {SIGINT, SIGQUIT, SIGTERM, SIGHUP}) signal(each, SIG_DFL);
      rlimit no_core{0, 0};  // SIGQUIT's default action dumps core
      setrlimit(RLIMIT_CORE, &no_core);
      if (!freopen("/dev/null", "w", stdout) || !freopen("/dev/null", "w", stderr)) _exit(127);
      execv(args[0], args.data());
      _exit(127);
    }
    auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    int status = 0;
    bool writing = false;
    while (!writing && std::chrono::steady_clock::now() < give_up) {
      if (waitpid(child, &status, WNOHANG) == child) {
        ADD_FAILURE() << arguments[0] << " ended before it could be stopped; make the trace larger";
        return status;
      }
      for (const std::string& name : output_directory()) writing = writing || name.find(".tmp-") != std::string::npos;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    EXPECT_TRUE(writing) << arguments[0] << " made no temporary file";
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // well into writing it
    kill(child, signal_number);
    waitpid(child, &status, 0);
    return status;
  }

  void expect_nothing_left(const std::vector<std::string>& arguments) {
    for (int signal_number : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) {
      int status = stop_while_writing(arguments, signal_number);
      EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == signal_number)
          << arguments[0] << ": status " << status << " after signal " << signal_number;
      for (const std::string& name : output_directory()) {
        ADD_FAILURE() << arguments[0] << " stopped by signal " << signal_number << " left " << name;
        std::remove((out_ / name).c_str());
      }
    }
  }

  static testing::ScratchDir* scratch_;
  testing::ScratchDir out_;
};

testing::ScratchDir* StoppedWhileWriting::scratch_ = nullptr;

TEST_F(StoppedWhileWriting, TimelineLeavesNoTemporaryFile) {
  expect_nothing_left({"timeline", *scratch_ / "big.db", "-o", out_ / "big.pftrace"});
  expect_nothing_left({"timeline", *scratch_ / "big.db", "--format", "chrome-json", "-o", out_ / "big.json"});
}

TEST_F(StoppedWhileWriting, MergeLeavesNoTemporaryFile) {
  expect_nothing_left({"merge", *scratch_ / "big.db", "-o", out_ / "merged.db"});
}

}  // namespace
}  // namespace apptracer
