// _exit and the exec family, interposed: the trace is finished before the
// process leaves without running its atexit handlers, and the exec'd
// program gets the output path and force as the run's first process left
// them.
#include <alloca.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <unistd.h>

#include <cstring>

#include "apptracer/schema.h"
#include "inject/lifecycle.h"
#include "store/writer.h"

// _exit skips atexit handlers, and exec replaces the image without running
// them: finish the trace first so it is complete. (The exec'd program, if
// still preloaded, starts a trace of its own.)
extern "C" __attribute__((visibility("default"))) void _exit(int status) {
  apptracer::inject::finish(apptracer::kStatusComplete);
  using ExitFunction = void (*)(int);
  static auto real_exit = reinterpret_cast<ExitFunction>(dlsym(RTLD_NEXT, "_exit"));
  real_exit(status);
  __builtin_unreachable();
}

namespace {

using ExecFunction = int (*)(const char*, char* const[], char* const[]);

bool starts_with(const char* text, const char* prefix) {
  return std::strncmp(text, prefix, std::strlen(prefix)) == 0;
}

// One entry of the exec'd program's environment. The first traced process
// resolved the output path where it started and took --force
// (base/config.h); a program may exec with its own copy of the environment
// as it was before (bash keeps one, and its setenv, which the tracer's calls
// reach, changes only that copy). Given as it came, the exec'd program would
// resolve the relative path in its own directory and remove what is there.
char* exec_entry(char* entry) {
  const char* output = apptracer::inject::state.exec_output_entry;
  if (!output) return entry;  // not preloaded: nothing was resolved or taken
  if (starts_with(entry, "APPTRACER_FORCE=")) return const_cast<char*>("APPTRACER_FORCE=0");
  constexpr char kOutput[] = "APPTRACER_OUTPUT=";
  const char* given = apptracer::inject::state.given_output;
  if (starts_with(entry, kOutput) && std::strcmp(entry + sizeof kOutput - 1, given) == 0) {
    return const_cast<char*>(output);
  }
  return entry;
}

size_t entries(char* const envp[]) {
  size_t count = 0;
  while (envp && envp[count]) ++count;
  return count;
}

// `envp` with exec_entry applied, into `out` (room for entries(envp) + 1):
// on the caller's stack, since a vfork child (subprocess) must not allocate.
char* const* exec_environment(char* const envp[], char** out) {
  size_t count = entries(envp);
  for (size_t i = 0; i < count; ++i) out[i] = exec_entry(envp[i]);
  out[count] = nullptr;
  return out;
}

// A vfork'd child (posix_spawn, subprocess) runs in our memory until it
// execs: only the process that owns the trace finishes it.
void finish_before_exec() {
  using namespace apptracer;
  using namespace apptracer::inject;
  if (!state.started || state.finished || getpid() != state.owner_pid.load()) return;
  state.writer->set_meta("end_reason", "exec");
  finish(kStatusComplete);
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int execve(const char* path, char* const argv[],
                                                             char* const envp[]) {
  static auto real = reinterpret_cast<ExecFunction>(dlsym(RTLD_NEXT, "execve"));
  finish_before_exec();
  auto environment = static_cast<char**>(alloca((entries(envp) + 1) * sizeof(char*)));
  return real(path, argv, exec_environment(envp, environment));
}

extern "C" __attribute__((visibility("default"))) int execv(const char* path, char* const argv[]) {
  return execve(path, argv, environ);
}

extern "C" __attribute__((visibility("default"))) int execvp(const char* file, char* const argv[]) {
  return execvpe(file, argv, environ);
}

// The variadic forms reach glibc's execve without passing through ours.
namespace {

constexpr int kMaxExecArguments = 4096;

// Collects execl-style arguments (up to the terminating null) into `argv`.
int collect_arguments(const char* first, va_list& rest, char* argv[]) {
  int count = 0;
  argv[count++] = const_cast<char*>(first);
  while (argv[count - 1] != nullptr && count < kMaxExecArguments) {
    argv[count++] = va_arg(rest, char*);
  }
  if (argv[count - 1] != nullptr) {
    errno = E2BIG;
    return -1;
  }
  return count;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int execl(const char* path, const char* arg, ...) {
  char* argv[kMaxExecArguments];
  va_list rest;
  va_start(rest, arg);
  int count = collect_arguments(arg, rest, argv);
  va_end(rest);
  return count < 0 ? -1 : execv(path, argv);
}

extern "C" __attribute__((visibility("default"))) int execlp(const char* file, const char* arg, ...) {
  char* argv[kMaxExecArguments];
  va_list rest;
  va_start(rest, arg);
  int count = collect_arguments(arg, rest, argv);
  va_end(rest);
  return count < 0 ? -1 : execvp(file, argv);
}

extern "C" __attribute__((visibility("default"))) int execle(const char* path, const char* arg, ...) {
  char* argv[kMaxExecArguments];
  va_list rest;
  va_start(rest, arg);
  int count = collect_arguments(arg, rest, argv);
  char* const* envp = count < 0 ? nullptr : va_arg(rest, char* const*);
  va_end(rest);
  return count < 0 ? -1 : execve(path, argv, envp);
}

extern "C" __attribute__((visibility("default"))) int execvpe(const char* file, char* const argv[],
                                                              char* const envp[]) {
  static auto real = reinterpret_cast<ExecFunction>(dlsym(RTLD_NEXT, "execvpe"));
  finish_before_exec();
  auto environment = static_cast<char**>(alloca((entries(envp) + 1) * sizeof(char*)));
  return real(file, argv, exec_environment(envp, environment));
}
