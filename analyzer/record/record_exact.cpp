#include "analyzer/record/record_exact.h"

#include <dirent.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "apptracer/schema.h"
#include "analyzer/record/exact_join.h"
#include "analyzer/record/tracer_library.h"
#include "analyzer/trace/trace_file.h"

namespace apptracer {

namespace {

// The files in `directory` whose names end with `suffix`, sorted.
std::vector<std::string> files_in(const std::string& directory, const std::string& suffix) {
  std::vector<std::string> files;
  DIR* listing = opendir(directory.c_str());
  if (!listing) return files;
  while (dirent* entry = readdir(listing)) {
    std::string name = entry->d_name;
    if (name[0] == '.') continue;
    if (name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
      files.push_back(directory + "/" + name);
    }
  }
  closedir(listing);
  std::sort(files.begin(), files.end());
  return files;
}

// Starts `command` with the tracer preloaded and `env` set; `log`: a file
// for its stdout and stderr instead of ours.
pid_t start_traced(const std::vector<std::string>& command, const std::string& library,
                   const Environment& env, const std::string& log = "") {
  pid_t child = fork();
  if (child < 0) std::perror("apptracer: fork");
  if (child != 0) return child;
  setenv("LD_PRELOAD", preload_with(library).c_str(), 1);
  for (const auto& [name, value] : env) setenv(name.c_str(), value.c_str(), 1);
  if (!log.empty()) {
    if (FILE* out = std::fopen(log.c_str(), "w")) {
      dup2(fileno(out), STDOUT_FILENO);
      dup2(fileno(out), STDERR_FILENO);
    }
  }
  std::vector<char*> argv;
  for (const std::string& arg : command) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  execvp(argv[0], argv.data());
  std::fprintf(stderr, "apptracer: cannot run %s: %s\n", argv[0], std::strerror(errno));
  _exit(127);
}

// Waits for a child; its wait status. With a limit, a child still running
// after `limit_s` seconds is killed.
int wait_for(pid_t child, int limit_s = 0) {
  if (child < 0) return W_EXITCODE(2, 0);
  int status = 0;
  for (int waited_ms = 0;; waited_ms += 100) {
    pid_t done = waitpid(child, &status, limit_s ? WNOHANG : 0);
    if (done == child) return status;
    if (done < 0 && errno != EINTR) return status;
    if (limit_s && done == 0) {
      if (waited_ms >= limit_s * 1000) kill(child, SIGKILL);
      usleep(100 * 1000);
    }
  }
}

std::string make_temporary_directory(const char* name) {
  std::string pattern = std::string("/tmp/apptracer-") + name + "-XXXXXX";
  return mkdtemp(pattern.data()) ? pattern : std::string();
}

void remove_directory(const std::string& directory) {
  if (directory.empty()) return;
  for (const std::string& file : files_in(directory, "")) unlink(file.c_str());
  rmdir(directory.c_str());
}

std::string last_line_of(const std::string& path) {
  std::FILE* in = std::fopen(path.c_str(), "r");
  if (!in) return "";
  std::string line, last;
  char buffer[512];
  while (std::fgets(buffer, sizeof buffer, in)) {
    line = buffer;
    while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
    if (!line.empty()) last = line;
  }
  std::fclose(in);
  return last;
}

// Whether CUPTI and the Compute Sanitizer work together here: the probe
// program, traced in one-run exact mode, judged by its trace (exact_probe.h).
ProbeVerdict probe_exact(const std::string& library) {
  std::string probe = directory_of_executable() + "/apptracer-exact-probe";
  if (access(probe.c_str(), X_OK) != 0) {
    return {ExactPath::TwoRuns, "no probe program " + probe};
  }
  std::string directory = make_temporary_directory("probe");
  std::string trace = directory + "/probe.db";
  std::string log = directory + "/probe.log";
  constexpr int kProbeLimitSeconds = 120;
  int status = wait_for(
      start_traced({probe}, library, {{"APPTRACER_OUTPUT", trace}, {"APPTRACER_EXACT", "1"}}, log),
      kProbeLimitSeconds);
  ProbeVerdict verdict;
  constexpr int kProbeFoundNoGpu = 77;  // probe.cu
  if (WIFEXITED(status) && WEXITSTATUS(status) == kProbeFoundNoGpu) {
    verdict = {ExactPath::Unavailable, "no usable GPU"};
  } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::string said = last_line_of(log);
    verdict = {ExactPath::TwoRuns, "the probe program failed" +
                                       (said.empty() ? std::string() : ": " + said)};
  } else if (access(trace.c_str(), R_OK) != 0) {
    std::string said = last_line_of(log);
    verdict = {ExactPath::Unavailable,
               said.empty() ? "the probe program left no trace" : said};
  } else {
    try {
      Database db = open_trace(trace, TraceAccess::ReadOnly);
      verdict = judge_probe_trace(db);
    } catch (const std::exception& error) {
      verdict = {ExactPath::TwoRuns, std::string("the probe's trace is unreadable: ") + error.what()};
    }
  }
  remove_directory(directory);
  return verdict;
}

}  // namespace

ExactPath choose_exact_path(const std::string& requested, const std::string& library) {
  if (requested == "one-run") {
    std::fprintf(stderr, "apptracer: --exact: one run (as asked: --exact-path one-run)\n");
    return ExactPath::OneRun;
  }
  if (requested == "two-run") {
    std::fprintf(stderr, "apptracer: --exact: two runs (as asked: --exact-path two-run)\n");
    return ExactPath::TwoRuns;
  }
  ProbeVerdict verdict = probe_exact(library);
  switch (verdict.path) {
    case ExactPath::OneRun:
      std::fprintf(stderr, "apptracer: --exact: one run (probe: %s)\n", verdict.reason.c_str());
      break;
    case ExactPath::TwoRuns:
      std::fprintf(stderr,
                   "apptracer: --exact: two runs (probe: %s): the program runs normally, then "
                   "again under the Compute Sanitizer; the runs are joined by kernel launch order\n",
                   verdict.reason.c_str());
      break;
    case ExactPath::Unavailable:
      std::fprintf(stderr, "apptracer: --exact unavailable: %s; recording in normal mode\n",
                   verdict.reason.c_str());
      break;
  }
  return verdict.path;
}

namespace {

// Whether every trace was finished by its process (status complete).
bool all_complete(const std::vector<std::string>& traces) {
  if (traces.empty()) return false;
  for (const std::string& path : traces) {
    Database db = open_trace(path, TraceAccess::ReadOnly);
    if (trace_meta(db, "status") != kStatusComplete) return false;
  }
  return true;
}

}  // namespace

bool run_sanitizer_and_join(const std::vector<std::string>& command, const std::string& library,
                            Environment env, const std::vector<std::string>& normal) {
  std::string directory = make_temporary_directory("exact");
  for (auto& [name, value] : env) {
    if (name == "APPTRACER_OUTPUT") value = directory + "/exact-%p.db";
    if (name == "APPTRACER_RUN_DIR") value.clear();
  }
  env.emplace_back("APPTRACER_EXACT", "sanitizer-only");
  // The join needs only the kernels' accesses and CUDA's allocations from
  // this run; host blocks come from the normal one.
  env.emplace_back("APPTRACER_HOST_ALLOCATIONS", "off");
  std::string log = directory + "/run.log";
  int status = wait_for(start_traced(command, library, env, log));
  bool joined = false;
  try {
    std::vector<std::string> sanitizer = files_in(directory, ".db");
    if (!WIFEXITED(status)) {
      // On the H100 (CUDA 13.0) this run now and then dies of SIGSEGV after
      // the program ended, in the driver's and the sanitizer's teardown: its
      // traces were finished before, and hold everything the join needs.
      std::string why = "the sanitizer run died of signal " + std::to_string(WTERMSIG(status));
      if (!all_complete(sanitizer)) throw ExactJoinError(why + ": " + last_line_of(log));
      std::fprintf(stderr, "apptracer: --exact: %s after its trace was complete; joining it\n",
                   why.c_str());
    }
    for (const auto& [ours, theirs] : pair_run_traces(normal, sanitizer)) {
      Database normal_trace = open_trace(ours, TraceAccess::ReadWrite);
      Database sanitizer_trace = open_trace(theirs, TraceAccess::ReadOnly);
      ExactJoinSummary summary = join_exact_runs(normal_trace, sanitizer_trace);
      std::fprintf(stderr,
                   "apptracer: --exact: joined %lld launches (%lld ranges, %lld in no matched "
                   "allocation) into %s\n",
                   static_cast<long long>(summary.launches), static_cast<long long>(summary.ranges),
                   static_cast<long long>(summary.unmatched_ranges), ours.c_str());
    }
    joined = true;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "apptracer: --exact: %s; the trace has no exact data\n", error.what());
  }
  remove_directory(directory);
  return joined;
}

}  // namespace apptracer
