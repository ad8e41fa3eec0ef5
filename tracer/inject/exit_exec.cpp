// _exit and the exec family, interposed: the trace is finished before the
// process leaves without running its atexit handlers.
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <unistd.h>

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
using ExecPathFunction = int (*)(const char*, char* const[]);

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
  return real(path, argv, envp);
}

extern "C" __attribute__((visibility("default"))) int execv(const char* path, char* const argv[]) {
  static auto real = reinterpret_cast<ExecPathFunction>(dlsym(RTLD_NEXT, "execv"));
  finish_before_exec();
  return real(path, argv);
}

extern "C" __attribute__((visibility("default"))) int execvp(const char* file, char* const argv[]) {
  static auto real = reinterpret_cast<ExecPathFunction>(dlsym(RTLD_NEXT, "execvp"));
  finish_before_exec();
  return real(file, argv);
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
  return real(file, argv, envp);
}
