// `apptracer record [-o FILE] [--force] -- PROGRAM ARGS...`
//
// Runs the program with libapptracer.so preloaded and waits for it. The exit
// status is the program's own (a program killed by a signal makes apptracer
// die of the same signal), so scripts behave the same with and without us.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
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

std::string prepend_preload(const std::string& library) {
  const char* existing = std::getenv("LD_PRELOAD");
  return existing && *existing ? library + ":" + existing : library;
}

int run_recorded(const std::vector<std::string>& command, const std::string& output, bool force) {
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
  pid_t child = fork();
  if (child < 0) {
    std::perror("apptracer: fork");
    return 2;
  }
  if (child == 0) {
    setenv("LD_PRELOAD", prepend_preload(library).c_str(), 1);
    setenv("APPTRACER_OUTPUT", output.c_str(), 1);
    if (force) setenv("APPTRACER_FORCE", "1", 1);
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
  if (WIFSIGNALED(status)) {
    signal(WTERMSIG(status), SIG_DFL);
    raise(WTERMSIG(status));
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

}  // namespace

void add_record_command(CLI::App& app, CommandResult& result) {
  auto* cmd = app.add_subcommand("record", "Run a program under the tracer and write its trace");
  auto output = std::make_shared<std::string>("apptracer-%p.db");
  auto force = std::make_shared<bool>(false);
  auto command = std::make_shared<std::vector<std::string>>();
  cmd->add_option("-o,--output", *output,
                  "Trace file; %p expands to the process id, %h to the host name")
      ->capture_default_str();
  cmd->add_flag("-f,--force", *force, "Overwrite an existing trace file");
  cmd->add_option("command", *command, "The program and its arguments (after --)")->required();
  cmd->callback([&result, output, force, command] {
    result = [output, force, command] { return run_recorded(*command, *output, *force); };
  });
}

}  // namespace apptracer
