// sigaction and signal, interposed (when preloaded): for a signal the tracer
// handles (fatal_signals.cpp), the program reads and sets its own action, as
// it would untraced, while the tracer's handler stays installed in front of
// it. Other signals, and every call before tracing starts, go to libc as
// they are.
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>

#include "inject/lifecycle.h"

extern "C" __attribute__((visibility("default"))) int sigaction(int signal_number,
                                                                const struct sigaction* action,
                                                                struct sigaction* previous) {
  using namespace apptracer::inject;
  if (!keeps_program_action(signal_number)) return real_sigaction(signal_number, action, previous);
  struct sigaction was = state.program_actions[signal_number];
  if (action) set_program_action(signal_number, *action);
  if (previous) *previous = was;
  return 0;
}

// glibc's signal() reaches its sigaction internally, past ours: the same
// BSD semantics (the handler stays, interrupted calls restart, the signal
// is held while its handler runs), through ours.
extern "C" __attribute__((visibility("default"))) sighandler_t signal(int signal_number,
                                                                      sighandler_t handler) {
  using namespace apptracer::inject;
  if (!keeps_program_action(signal_number)) {
    using SignalFunction = sighandler_t (*)(int, sighandler_t);
    static auto real = reinterpret_cast<SignalFunction>(dlsym(RTLD_NEXT, "signal"));
    return real(signal_number, handler);
  }
  struct sigaction action {};
  action.sa_handler = handler;
  sigemptyset(&action.sa_mask);
  sigaddset(&action.sa_mask, signal_number);
  action.sa_flags = SA_RESTART;
  struct sigaction previous {};
  sigaction(signal_number, &action, &previous);
  return previous.sa_handler;
}
