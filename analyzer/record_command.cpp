// `apptracer record [-o FILE] [--force] [--exact] -- PROGRAM ARGS...`
//
// Runs the program with libapptracer.so preloaded and waits for it. The exit
// status is the program's own (a program killed by a signal makes apptracer
// die of the same signal), so scripts behave the same with and without us.
//
// --exact first decides how (exact_probe.h): one run with the normal capture
// where CUPTI and the Compute Sanitizer work together, else two runs joined
// by launch order (exact_join.h), and says which on stderr. When the two runs
// cannot be joined, the normal trace is kept and the exit status is 2 (or the
// program's own, when it failed).
#include <glob.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "commands.h"
#include "exact_join.h"
#include "exact_probe.h"
#include "trace_file.h"

namespace apptracer {

namespace {

std::string directory_of_executable() {
  char path[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
  if (n <= 0) return ".";
  path[n] = '\0';
  std::string full(path);
  return full.substr(0, full.rfind('/'));
}

// The tracer sits in ../lib when installed and in ../tracer in a build tree.
std::string find_tracer_library() {
  if (const char* explicit_path = std::getenv("APPTRACER_LIBRARY")) return explicit_path;
  std::string bin = directory_of_executable();
  for (const char* relative : {"/../lib/libapptracer.so", "/../tracer/libapptracer.so"}) {
    std::string candidate = bin + relative;
    if (access(candidate.c_str(), R_OK) == 0) {
      char resolved[PATH_MAX];
      return realpath(candidate.c_str(), resolved) ? resolved : candidate;
    }
  }
  return "";
}

std::string prepend_preload(const std::string& library) {
  const char* existing = std::getenv("LD_PRELOAD");
  return existing && *existing ? library + ":" + existing : library;
}

// The files this run may write: the output pattern with %p (and the
// NAME-PID fallbacks the tracer takes on a name clash) as wildcards.
std::string trace_glob(const std::string& pattern) {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '%' && i + 1 < pattern.size()) {
      char code = pattern[++i];
      out += code == 'p' ? std::string("*") : code == 'h' ? std::string(host) : std::string(1, code);
    } else {
      out += pattern[i];
    }
  }
  size_t slash = out.rfind('/');
  size_t dot = out.rfind('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) dot = out.size();
  return out.substr(0, dot) + "*" + out.substr(dot);
}

using FileTimes = std::map<std::string, int64_t>;

FileTimes trace_files(const std::string& pattern) {
  FileTimes files;
  glob_t matches{};
  if (glob(trace_glob(pattern).c_str(), 0, nullptr, &matches) == 0) {
    for (size_t i = 0; i < matches.gl_pathc; ++i) {
      struct stat info {};
      std::string path = matches.gl_pathv[i];
      bool sidecar = path.size() > 4 && (path.compare(path.size() - 4, 4, "-wal") == 0 ||
                                         path.compare(path.size() - 4, 4, "-shm") == 0);
      if (!sidecar && stat(path.c_str(), &info) == 0) {
        files[path] = info.st_mtim.tv_sec * 1000000000LL + info.st_mtim.tv_nsec;
      }
    }
  }
  globfree(&matches);
  return files;
}

// Says which traces the run wrote, as nsys says what it generated, and
// returns them.
std::vector<std::string> report_written_traces(const std::string& pattern,
                                               const FileTimes& before) {
  std::vector<std::string> written;
  for (const auto& [path, mtime] : trace_files(pattern)) {
    auto old = before.find(path);
    if (old == before.end() || old->second != mtime) {
      std::fprintf(stderr, "apptracer: trace written to %s\n", path.c_str());
      written.push_back(path);
    }
  }
  return written;
}

// What `apptracer record` passes to the tracer in the environment.
struct RecordOptions {
  std::string output = "apptracer-%p.db";
  bool force = false;
  std::string host_allocations = "touched";
  std::optional<uint64_t> host_min_bytes;
  bool exact = false;
  std::string exact_path = "auto";  // auto, one-run, two-run
};

using Environment = std::vector<std::pair<std::string, std::string>>;

Environment tracer_environment(const RecordOptions& options, const std::string& output,
                               bool force) {
  Environment env = {{"APPTRACER_OUTPUT", output},
                     {"APPTRACER_HOST_ALLOCATIONS", options.host_allocations}};
  if (force) env.emplace_back("APPTRACER_FORCE", "1");
  if (options.host_min_bytes) {
    env.emplace_back("APPTRACER_HOST_MIN_BYTES", std::to_string(*options.host_min_bytes));
  }
  return env;
}

// Starts `command` with the tracer preloaded and `env` set; `log`: a file
// for its stdout and stderr instead of ours.
pid_t start_traced(const std::vector<std::string>& command, const std::string& library,
                   const Environment& env, const std::string& log = "") {
  pid_t child = fork();
  if (child < 0) std::perror("apptracer: fork");
  if (child != 0) return child;
  setenv("LD_PRELOAD", prepend_preload(library).c_str(), 1);
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

// The program's exit status as apptracer's: a program killed by a signal
// makes apptracer die of the same signal.
int exit_code_of(int status) {
  if (WIFSIGNALED(status)) {
    signal(WTERMSIG(status), SIG_DFL);
    raise(WTERMSIG(status));
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

std::string make_temporary_directory(const char* name) {
  std::string pattern = std::string("/tmp/apptracer-") + name + "-XXXXXX";
  return mkdtemp(pattern.data()) ? pattern : std::string();
}

void remove_directory(const std::string& directory) {
  if (directory.empty()) return;
  glob_t matches{};
  if (glob((directory + "/*").c_str(), 0, nullptr, &matches) == 0) {
    for (size_t i = 0; i < matches.gl_pathc; ++i) unlink(matches.gl_pathv[i]);
  }
  globfree(&matches);
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
  constexpr int kProbeFoundNoGpu = 77;  // exact_probe/probe.cu
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

ExactPath choose_exact_path(const RecordOptions& options, const std::string& library) {
  if (options.exact_path == "one-run") {
    std::fprintf(stderr, "apptracer: --exact: one run (as asked: --exact-path one-run)\n");
    return ExactPath::OneRun;
  }
  if (options.exact_path == "two-run") {
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

// The second run of the two-run scheme: the program under the sanitizer
// alone, quietly, its traces in a temporary directory; then each joins the
// normal run's trace of the same process. Returns whether every join worked.
bool run_sanitizer_and_join(const std::vector<std::string>& command, const std::string& library,
                            const RecordOptions& options, const std::vector<std::string>& normal) {
  std::string directory = make_temporary_directory("exact");
  Environment env = tracer_environment(options, directory + "/exact-%p.db", true);
  env.emplace_back("APPTRACER_EXACT", "sanitizer-only");
  std::string log = directory + "/run.log";
  int status = wait_for(start_traced(command, library, env, log));
  bool joined = false;
  try {
    if (!WIFEXITED(status)) {
      throw ExactJoinError("the sanitizer run died of signal " +
                           std::to_string(WTERMSIG(status)) + ": " + last_line_of(log));
    }
    std::vector<std::string> sanitizer;
    for (const auto& [path, mtime] : trace_files(directory + "/exact-%p.db")) {
      sanitizer.push_back(path);
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

int run_recorded(const std::vector<std::string>& command, const RecordOptions& options) {
  const std::string& output = options.output;
  bool force = options.force;
  std::string library = find_tracer_library();
  if (library.empty()) {
    std::fprintf(stderr,
                 "apptracer: cannot find libapptracer.so next to this program; "
                 "set APPTRACER_LIBRARY to its path\n");
    return 2;
  }
  if (output.find("%p") == std::string::npos && !force && access(output.c_str(), F_OK) == 0) {
    std::fprintf(stderr, "apptracer: %s exists; use --force to overwrite it or -o to choose another\n",
                 output.c_str());
    return 2;
  }
  ExactPath path = options.exact ? choose_exact_path(options, library) : ExactPath::Unavailable;
  Environment env = tracer_environment(options, output, force);
  if (path == ExactPath::OneRun) env.emplace_back("APPTRACER_EXACT", "1");
  FileTimes before = trace_files(output);
  // The program, not apptracer, should receive the terminal's Ctrl-C.
  signal(SIGINT, SIG_IGN);
  signal(SIGQUIT, SIG_IGN);
  int status = wait_for(start_traced(command, library, env));
  std::vector<std::string> written = report_written_traces(output, before);
  if (path == ExactPath::TwoRuns && !WIFSIGNALED(status) &&
      !run_sanitizer_and_join(command, library, options, written)) {
    // The normal trace is complete; the exact data is not there.
    int code = exit_code_of(status);
    return code == 0 ? 2 : code;
  }
  return exit_code_of(status);
}

}  // namespace

void add_record_command(CLI::App& app, CommandResult& result) {
  auto* cmd = app.add_subcommand("record", "Run a program under the tracer and write its trace");
  auto options = std::make_shared<RecordOptions>();
  auto command = std::make_shared<std::vector<std::string>>();
  cmd->add_option("-o,--output", options->output,
                  "Trace file; %p expands to the process id, %h to the host name")
      ->capture_default_str();
  cmd->add_flag("-f,--force", options->force, "Overwrite an existing trace file");
  cmd->add_option("--host-allocations", options->host_allocations,
                  "Host blocks (malloc family, anonymous mmap) stored as allocations: those CUDA "
                  "touches, all of them (also in programs without CUDA), or off (allocator not "
                  "watched)")
      ->check(CLI::IsMember({"touched", "all", "off"}))
      ->capture_default_str();
  cmd->add_option("--host-min-bytes", options->host_min_bytes,
                  "Smallest host block tracked; smaller ones are only counted (default 4096)");
  cmd->add_flag("--exact", options->exact,
                "Also record what each kernel launch really read and wrote, from the GPU "
                "(Compute Sanitizer; slower, see README)");
  cmd->add_option("--exact-path", options->exact_path,
                  "--exact in one run with the normal capture, in two runs joined by launch "
                  "order, or whichever a probe finds works here")
      ->check(CLI::IsMember({"auto", "one-run", "two-run"}))
      ->capture_default_str();
  cmd->add_option("command", *command, "The program and its arguments (after --)")->required();
  cmd->callback([&result, options, command] {
    result = [options, command] { return run_recorded(*command, *options); };
  });
}

}  // namespace apptracer
