// `apptracer record [-o FILE] [--force] -- PROGRAM ARGS...`
//
// Runs the program with libapptracer.so preloaded and waits for it. The exit
// status is the program's own (a program killed by a signal makes apptracer
// die of the same signal), so scripts behave the same with and without us.
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
void set_framework_environment(const std::string& mode, const std::string& library) {
  setenv("APPTRACER_FRAMEWORK_ALLOCATORS", mode.c_str(), 1);
  if (mode == "off") return;
  std::string bootstrap = python_bootstrap_directory(library);
  if (!bootstrap.empty()) setenv("PYTHONPATH", prepend_to("PYTHONPATH", bootstrap).c_str(), 1);
  // RMM has no setting for this: its default resource already allocates
  // through CUDA per buffer, a pool is the program's own choice.
  if (mode == "per-buffer") setenv("XLA_PYTHON_CLIENT_ALLOCATOR", "platform", 1);
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

// Says which traces the run wrote, as nsys says what it generated.
void report_written_traces(const std::string& pattern, const FileTimes& before) {
  for (const auto& [path, mtime] : trace_files(pattern)) {
    auto old = before.find(path);
    if (old == before.end() || old->second != mtime) {
      std::fprintf(stderr, "apptracer: trace written to %s\n", path.c_str());
    }
  }
}

// What `apptracer record` passes to the tracer in the environment.
struct RecordOptions {
  std::string output = "apptracer-%p.db";
  bool force = false;
  std::string host_allocations = "touched";
  std::optional<uint64_t> host_min_bytes;
  std::string framework_allocators = "hooks";
};

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
  FileTimes before = trace_files(output);
  pid_t child = fork();
  if (child < 0) {
    std::perror("apptracer: fork");
    return 2;
  }
  if (child == 0) {
    setenv("LD_PRELOAD", prepend_to("LD_PRELOAD", library).c_str(), 1);
    set_framework_environment(options.framework_allocators, library);
    setenv("APPTRACER_OUTPUT", output.c_str(), 1);
    if (force) setenv("APPTRACER_FORCE", "1", 1);
    setenv("APPTRACER_HOST_ALLOCATIONS", options.host_allocations.c_str(), 1);
    if (options.host_min_bytes) {
      setenv("APPTRACER_HOST_MIN_BYTES", std::to_string(*options.host_min_bytes).c_str(), 1);
    }
    std::vector<char*> argv;
    for (const std::string& arg : command) argv.push_back(const_cast<char*>(arg.c_str()));
    argv.push_back(nullptr);
    execvp(argv[0], argv.data());
    std::fprintf(stderr, "apptracer: cannot run %s: %s\n", argv[0], std::strerror(errno));
    _exit(127);
  }
  // The program, not apptracer, should receive the terminal's Ctrl-C.
  signal(SIGINT, SIG_IGN);
  signal(SIGQUIT, SIG_IGN);
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  report_written_traces(output, before);
  if (WIFSIGNALED(status)) {
    signal(WTERMSIG(status), SIG_DFL);
    raise(WTERMSIG(status));
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
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
  cmd->add_option("--framework-allocators", options->framework_allocators,
                  "Framework allocators' blocks: hooks (PyTorch's caching allocator and CuPy's "
                  "pool report each tensor), per-buffer (also make JAX/XLA allocate each buffer "
                  "through CUDA: slower), off (seen as their CUDA segments only)")
      ->check(CLI::IsMember({"hooks", "per-buffer", "off"}))
      ->capture_default_str();
  cmd->add_option("command", *command, "The program and its arguments (after --)")->required();
  cmd->callback([&result, options, command] {
    result = [options, command] { return run_recorded(*command, *options); };
  });
}

}  // namespace apptracer
