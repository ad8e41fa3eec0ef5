// `apptracer record [-o FILE] [-f] [--exact] -- PROGRAM ARGS...`
//
// Runs the program with libapptracer.so preloaded and waits for it. The exit
// status is the program's own (a program killed by a signal makes apptracer
// die of the same signal), so scripts behave the same with and without us;
// record's own errors, before the program runs, exit 1.
//
// --exact first decides how (record_exact.h), and says which on stderr. When
// the two runs cannot be joined, the normal trace is kept and the exit status
// is 2 (or the program's own, when it failed).
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "apptracer/output_path.h"
#include "apptracer/schema.h"
#include "apptracer/um_counter_groups.h"
#include "analyzer/commands.h"
#include "analyzer/record/exact_coverage_store.h"
#include "analyzer/record/tracer_library.h"
#include "analyzer/record/record_exact.h"
#include "apptracer/text_escape.h"
#include "analyzer/trace/trace_file.h"

namespace apptracer {

namespace {

// `entry` before what the colon-separated variable holds.
std::string prepend_to(const char* variable, const std::string& entry) {
  const char* existing = std::getenv(variable);
  return existing && *existing ? entry + ":" + existing : entry;
}

// The Python bootstrap (sitecustomize.py) beside the library, if installed.
std::string python_bootstrap_directory(const std::string& library) {
  std::string directory = library.substr(0, library.rfind('/') + 1) + "apptracer-python";
  return access((directory + "/sitecustomize.py").c_str(), R_OK) == 0 ? directory : "";
}

// How the program's framework allocators are seen: `hooks` (PyTorch's
// caching allocator and CuPy's pool report each block through the Python
// bootstrap), `per-buffer` (the same, and allocators without hooks are made
// to allocate each buffer through CUDA: JAX/XLA's platform allocator),
// `off` (neither: framework allocators are seen as their CUDA segments).
// `context`: which PyTorch module and op issued each launch (the bootstrap's
// hooks; empty: the tracer's default, off).
void add_framework_environment(Environment& env, const std::string& mode, const std::string& context,
                               const std::string& library) {
  env.emplace_back("APPTRACER_FRAMEWORK_ALLOCATORS", mode);
  if (!context.empty()) env.emplace_back("APPTRACER_FRAMEWORK_CONTEXT", context);
  if (mode == "off" && context == "off") return;
  std::string bootstrap = python_bootstrap_directory(library);
  if (!bootstrap.empty()) env.emplace_back("PYTHONPATH", prepend_to("PYTHONPATH", bootstrap));
  // RMM has no setting for this: its default resource already allocates
  // through CUDA per buffer, a pool is the program's own choice.
  if (mode == "per-buffer") env.emplace_back("XLA_PYTHON_CLIENT_ALLOCATOR", "platform");
}

// What `apptracer record` passes to the tracer in the environment.
struct RecordOptions {
  std::string output = "apptracer-%p.db";
  bool force = false;
  std::string host_allocations = "touched";
  std::optional<uint64_t> host_min_bytes;
  std::string framework_allocators = "hooks";
  std::string framework_context;  // empty: the tracer's default (sampled)
  std::string unified_memory;  // empty: the tracer's default
  bool self_cost = false;
  // "timing": calls, kernels, copies, memsets and synchronizations only (no
  // launch arguments, host blocks or framework blocks), the least the tracer
  // can cost; "full": everything.
  std::string level = "full";
  bool exact = false;
  std::string exact_path = "auto";  // auto, one-run, two-run
};

// What the traced program gets in its environment, beside LD_PRELOAD.
Environment tracer_environment(const RecordOptions& options, const std::string& library,
                               const std::string& run_dir, ExactPath exact) {
  Environment env = {{"APPTRACER_OUTPUT", options.output},
                     {"APPTRACER_HOST_ALLOCATIONS", options.host_allocations}};
  if (options.force) env.emplace_back("APPTRACER_FORCE", "1");
  if (!run_dir.empty()) env.emplace_back("APPTRACER_RUN_DIR", run_dir);
  if (options.host_min_bytes) {
    env.emplace_back("APPTRACER_HOST_MIN_BYTES", std::to_string(*options.host_min_bytes));
  }
  if (!options.unified_memory.empty()) {
    env.emplace_back("APPTRACER_UNIFIED_MEMORY", options.unified_memory);
  }
  if (options.self_cost) env.emplace_back("APPTRACER_SELF_COST", "1");
  if (options.level == "timing") env.emplace_back("APPTRACER_KERNEL_ARGUMENTS", "off");
  if (exact == ExactPath::OneRun) env.emplace_back("APPTRACER_EXACT", "1");
  add_framework_environment(env, options.framework_allocators, options.framework_context, library);
  return env;
}

// A trace a process of the run announced (tracer/base/config.h).
struct AnnouncedTrace {
  std::string path;
  pid_t pid = 0;  // 0: not said
};

// Every process of the run announces the trace it writes in a directory of
// the run's own (APPTRACER_RUN_DIR, tracer/base/config.h), so record lists
// exactly the traces this run wrote, wherever each process wrote them (%h,
// %%, NAME-PID names, another working directory) and nothing another run
// wrote beside them.
class RunDirectory {
 public:
  RunDirectory() {
    const char* tmpdir = std::getenv("TMPDIR");
    path_ = std::string(tmpdir && *tmpdir ? tmpdir : "/tmp") + "/apptracer-run-XXXXXX";
    if (!mkdtemp(path_.data())) path_.clear();
  }
  ~RunDirectory() {
    for (const std::string& file : entries()) unlink((path_ + "/" + file).c_str());
    if (!path_.empty()) rmdir(path_.c_str());
  }
  RunDirectory(const RunDirectory&) = delete;
  RunDirectory& operator=(const RunDirectory&) = delete;

  const std::string& path() const { return path_; }

  // The traces announced so far, each once, in the order they were taken.
  std::vector<AnnouncedTrace> traces() const {
    std::vector<std::pair<int64_t, AnnouncedTrace>> found;
    for (const std::string& file : entries()) {
      if (file.rfind("trace-", 0) != 0) continue;  // what a process said (first_in_run_to_say)
      std::string entry = path_ + "/" + file;
      std::ifstream in(entry);
      AnnouncedTrace trace;
      std::string pid;
      struct stat info {};
      // The path ends at a NUL (tracer/base/config.h): it may hold a newline.
      if (std::getline(in, trace.path, '\0') && !trace.path.empty() &&
          stat(entry.c_str(), &info) == 0) {
        if (std::getline(in, pid)) trace.pid = std::atoi(pid.c_str());
        found.emplace_back(info.st_mtim.tv_sec * 1000000000LL + info.st_mtim.tv_nsec, trace);
      }
    }
    std::sort(found.begin(), found.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<AnnouncedTrace> traces;
    for (const auto& [time, trace] : found) {
      bool seen = std::any_of(traces.begin(), traces.end(),
                              [&](const AnnouncedTrace& t) { return t.path == trace.path; });
      if (!seen) traces.push_back(trace);
    }
    return traces;
  }

 private:
  std::vector<std::string> entries() const {
    std::vector<std::string> names;
    DIR* directory = path_.empty() ? nullptr : opendir(path_.c_str());
    if (!directory) return names;
    while (dirent* entry = readdir(directory)) {
      if (entry->d_name[0] != '.') names.push_back(entry->d_name);
    }
    closedir(directory);
    return names;
  }

  std::string path_;
};

// The program being recorded, for pass_to_program.
volatile pid_t recorded_program = 0;

// A SIGTERM or SIGHUP sent to record (a job scheduler, a closed terminal) is
// the program's: passed on, so the program ends as it would untraced and
// record still lists its traces before dying of the program's signal.
void pass_to_program(int signal_number) {
  if (recorded_program > 0) kill(recorded_program, signal_number);
}

// Whether `pid` still runs (a process of the run that outlived the program).
bool still_running(pid_t pid) { return pid > 0 && (kill(pid, 0) == 0 || errno == EPERM); }

// One line on a trace the run wrote: "trace written to PATH (complete)",
// "(incomplete: signal 15)", "(incomplete: its process ended before the
// trace's end was written)", or, for a file its process created and never
// began, what it is. Such a file holds nothing: it is removed (with the
// journal beside it) once its process is gone. The path is shown escaped: a
// program may name its trace with any bytes.
std::string trace_line(const AnnouncedTrace& trace) {
  const std::string& path = trace.path;
  std::string shown = terminal_text(path);
  struct stat info {};
  if (stat(path.c_str(), &info) != 0) return "trace " + shown + " is gone: removed since it was written";
  try {
    std::string note;
    Database db = open_trace(path, TraceAccess::ReadOnly, note);
    std::string status = trace_meta(db, "status", "incomplete");
    std::string reason = trace_meta(db, "end_reason");
    // Without a reason the trace's end was never written: its process still
    // runs, or ended where no handler could write it (SIGKILL, or a signal
    // whose write ran out of time; the tracer's stderr line then says which).
    if (reason.empty() && status != kStatusComplete) {
      reason = still_running(trace.pid) ? "its process still runs"
                                        : "its process ended before the trace's end was written";
    }
    if (!reason.empty() && status != kStatusComplete) status += ": " + reason;
    return "trace written to " + shown + " (" + terminal_text(status) + ")";
  } catch (const EmptyTrace&) {
    if (still_running(trace.pid)) {
      return "trace " + shown + " not begun yet: its process " + std::to_string(trace.pid) +
             " still runs";
    }
    for (const char* suffix : {"", "-journal", "-wal", "-shm"}) unlink((path + suffix).c_str());
    return "no trace in " + shown + " (" + EmptyTrace::kWhy + "; the empty file was removed)";
  } catch (const std::exception& error) {
    return "trace written to " + shown + " (unreadable: " + one_line(error.what()) + ")";
  }
}

// Says which traces the run wrote and in what state, as nsys says what it
// generated; or, when a signal ended the program before any, that it did.
// Returns the traces that hold something.
// (A program that ran to its end without a trace was not traced, and the
// tracer said why, or it never used CUDA: docs/tracing.md.)
std::vector<std::string> report_traces(const RunDirectory& run, int status) {
  std::vector<AnnouncedTrace> traces = run.traces();
  std::vector<std::string> written;
  for (const AnnouncedTrace& trace : traces) {
    std::fprintf(stderr, "apptracer: %s\n", trace_line(trace).c_str());
    struct stat info {};
    if (stat(trace.path.c_str(), &info) == 0 && info.st_size > 0) written.push_back(trace.path);
  }
  if (traces.empty() && WIFSIGNALED(status)) {
    std::fprintf(stderr,
                 "apptracer: no trace written: the program was killed by %s before the tracer "
                 "wrote anything\n",
                 strsignal(WTERMSIG(status)));
  }
  return written;
}

// Stores each trace's exact_coverage and says how much the sanitizer saw:
// where it did not see everything, the analyzer takes the signatures'
// accesses, and `stats --report exact` says which kernels those are.
void say_exact_coverage(const std::vector<std::string>& traces) {
  for (const std::string& path : traces) {
    try {
      Database db = open_trace(path, TraceAccess::ReadWrite);
      StoredCoverage stored = store_exact_coverage(db);
      if (stored.launches == 0) continue;
      std::fprintf(stderr,
                   "apptracer: --exact: the sanitizer saw all of %lld of %lld launches in %s; "
                   "the rest fall back to their signatures (stats --report exact)\n",
                   static_cast<long long>(stored.launches_exact),
                   static_cast<long long>(stored.launches), path.c_str());
    } catch (const std::exception& error) {
      std::fprintf(stderr, "apptracer: --exact: coverage not stored in %s: %s\n", path.c_str(),
                   one_line(error.what()).c_str());
    }
  }
}

int run_recorded(const std::vector<std::string>& command, const RecordOptions& given) {
  // Every process of the run writes where record was started, whatever
  // directory it starts in or changes to.
  RecordOptions options = given;
  options.output = absolute_output_path(given.output);
  const std::string& output = options.output;
  bool force = options.force;
  std::string library = find_tracer_library();
  if (library.empty()) {
    std::fprintf(stderr,
                 "apptracer: cannot find libapptracer.so next to this program; "
                 "set APPTRACER_LIBRARY to its path\n");
    return 1;
  }
  if (output.find("%p") == std::string::npos && !force && access(output.c_str(), F_OK) == 0) {
    std::fprintf(stderr, "apptracer: %s exists; use --force to overwrite it or -o to choose another\n",
                 terminal_text(output).c_str());
    return 1;
  }
  ExactPath exact = options.exact ? choose_exact_path(options.exact_path, library)
                                  : ExactPath::Unavailable;
  int status = 0;
  bool joined = true;
  {
    RunDirectory run;
    Environment environment = tracer_environment(options, library, run.path(), exact);
    // Closed by a successful exec; a byte in it says exec failed (the child
    // says why), and then there is no trace to speak of.
    int exec_failed[2];
    if (pipe2(exec_failed, O_CLOEXEC) != 0) {
      std::perror("apptracer: pipe");
      return 1;
    }
    pid_t child = fork();
    if (child < 0) {
      std::perror("apptracer: fork");
      return 1;
    }
    if (child == 0) {
      setenv("LD_PRELOAD", prepend_to("LD_PRELOAD", library).c_str(), 1);
      for (const auto& [name, value] : environment) setenv(name.c_str(), value.c_str(), 1);
      std::vector<char*> argv;
      for (const std::string& arg : command) argv.push_back(const_cast<char*>(arg.c_str()));
      argv.push_back(nullptr);
      execvp(argv[0], argv.data());
      std::fprintf(stderr, "apptracer: cannot run %s: %s\n", argv[0], std::strerror(errno));
      char failed = 1;
      ssize_t written = write(exec_failed[1], &failed, 1);
      static_cast<void>(written);
      _exit(127);
    }
    close(exec_failed[1]);
    // The program, not apptracer, should receive the terminal's Ctrl-C.
    signal(SIGINT, SIG_IGN);
    signal(SIGQUIT, SIG_IGN);
    recorded_program = child;
    struct sigaction pass {};
    pass.sa_handler = pass_to_program;
    pass.sa_flags = SA_RESTART;
    sigemptyset(&pass.sa_mask);
    for (int signal_number : {SIGTERM, SIGHUP}) sigaction(signal_number, &pass, nullptr);
    char failed = 0;
    bool ran = read(exec_failed[0], &failed, 1) != 1;
    close(exec_failed[0]);
    while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    recorded_program = 0;  // reaped: its pid may be another's now
    std::vector<std::string> written;
    if (ran) written = report_traces(run, status);
    if (ran && exact == ExactPath::TwoRuns && !WIFSIGNALED(status)) {
      joined = run_sanitizer_and_join(command, library, environment, written);
    }
    if (ran && exact != ExactPath::Unavailable && joined) say_exact_coverage(written);
  }
  if (WIFSIGNALED(status)) {
    signal(WTERMSIG(status), SIG_DFL);
    raise(WTERMSIG(status));
  }
  int code = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
  // The normal trace is complete; the exact data is not there.
  return code == 0 && !joined ? 2 : code;
}

}  // namespace

void add_record_command(CLI::App& app, CommandResult& result) {
  auto* cmd = app.add_subcommand("record", "Run a program under the tracer and write its trace");
  auto options = std::make_shared<RecordOptions>();
  auto command = std::make_shared<std::vector<std::string>>();
  auto output = written_files(cmd, "Trace file; %p expands to the process id, %h to the host name");
  output->path = options->output;
  output->output_option->capture_default_str();
  auto* level = cmd->add_option("--level", options->level,
                                "What is recorded: full (the data-flow graph's inputs too), or timing "
                                "(calls, kernels, copies, memsets, syncs: no launch arguments, host "
                                "blocks or tensor blocks, and no framework context unless "
                                "--framework-context asks; the cheapest, see docs/tracing.md)")
                    ->check(CLI::IsMember({"full", "timing"}))
                    ->capture_default_str();
  auto* host_allocations = cmd->add_option("--host-allocations", options->host_allocations,
                  "Host blocks (malloc family, anonymous mmap) stored as allocations: those CUDA "
                  "touches, all of them (also in programs without CUDA), or off (allocator not "
                  "watched)")
      ->check(CLI::IsMember({"touched", "all", "off"}))
      ->capture_default_str();
  cmd->add_option("--host-min-bytes", options->host_min_bytes,
                  "Smallest host block tracked; smaller ones are only counted (default 4096)")
      ->check(CLI::NonNegativeNumber);
  auto* framework_allocators = cmd->add_option("--framework-allocators", options->framework_allocators,
                  "Framework allocators' blocks: hooks (PyTorch's caching allocator and CuPy's "
                  "pool report each tensor), per-buffer (also make JAX/XLA allocate each buffer "
                  "through CUDA: slower), off (seen as their CUDA segments only)")
      ->check(CLI::IsMember({"hooks", "per-buffer", "off"}))
      ->capture_default_str();
  cmd->add_option("--framework-context", options->framework_context,
                  "Which PyTorch module and op issued each launch: off, modules (module ranges), "
                  "sampled (module ranges and 1 in 16 ops; the analyzer names the rest from other "
                  "steps; the default), on (every op), all (also ops that issued nothing); see "
                  "docs/tracing.md")
      ->check(CLI::IsMember({"off", "modules", "sampled", "on", "all"}));
  cmd->add_option("--unified-memory", options->unified_memory,
                  "Unified-memory counters recorded, a comma-separated list of groups: " +
                      um_counter_group_names() +
                      ". The default leaves migrations and page faults out: recording them "
                      "slows on-demand migration itself (migrations halve it; see docs/tracing.md)")
      ->check([](const std::string& value) {
        return um_counter_kinds(value) ? std::string()
                                       : "not a list of " + um_counter_group_names();
      });
  cmd->add_flag("--self-cost", options->self_cost,
                "Time the tracer's own work per site (CUDA callbacks, kernel arguments, host and "
                "framework allocator hooks, activity buffers, the writer's CPU) into meta "
                "self_cost; adds two clock reads per timed call");
  cmd->add_flag("--exact", options->exact,
                "Also record what each kernel launch really read and wrote, from the GPU "
                "(Compute Sanitizer; slower, see docs/tracing.md)");
  cmd->add_option("--exact-path", options->exact_path,
                  "--exact in one run with the normal capture, in two runs joined by launch "
                  "order, or whichever a probe finds works here")
      ->check(CLI::IsMember({"auto", "one-run", "two-run"}))
      ->capture_default_str();
  cmd->add_option("command", *command, "The program and its arguments (after --)")->required();
  cmd->callback([&result, options, command, output, level, host_allocations, framework_allocators] {
    options->output = output->path;
    options->force = output->force;
    if (options->level == "timing") {
      for (CLI::Option* asked : {host_allocations, framework_allocators}) {
        if (asked->count() > 0) {
          throw CLI::ValidationError(level->get_name(), "--level timing records no host or tensor blocks: leave " +
                                                            asked->get_name() + " out");
        }
      }
      options->host_allocations = "off";
      options->framework_allocators = "off";
      if (options->framework_context.empty()) options->framework_context = "off";
    }
    result = [options, command] { return run_recorded(*command, *options); };
  });
}

}  // namespace apptracer
