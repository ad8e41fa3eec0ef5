// One last flush when a signal ends the process: a crash, or a signal sent
// from outside whose action is to end it. Ours chains to the program's
// action, which stays the program's to set and to see
// (signal_dispositions.cpp).
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <unistd.h>

#include "base/deferred_signal.h"
#include "base/own_code.h"
#include "base/signal_sets.h"
#include "inject/lifecycle.h"
#include "store/writer.h"

namespace apptracer::inject {

namespace {

// The signals whose default action ends the process: those a crash raises,
// and those sent from outside (kill, Ctrl-C, a closed terminal or pipe,
// timers, resource limits). Not SIGKILL and SIGSTOP, which no handler sees.
const int kHandledSignals[] = {SIGSEGV, SIGBUS,  SIGFPE,  SIGILL,  SIGABRT, SIGSYS,
                               SIGTERM, SIGINT,  SIGHUP,  SIGQUIT, SIGPIPE, SIGALRM,
                               SIGUSR1, SIGUSR2, SIGXCPU, SIGXFSZ};

using SigactionFunction = int (*)(int, const struct sigaction*, struct sigaction*);

// Resolved when the handlers are installed, never first in a handler (dlsym
// is not async-signal-safe).
SigactionFunction libc_sigaction() {
  static auto real = reinterpret_cast<SigactionFunction>(dlsym(RTLD_NEXT, "sigaction"));
  return real;
}

bool is_default(const struct sigaction& action) {
  return !(action.sa_flags & SA_SIGINFO) && action.sa_handler == SIG_DFL;
}

bool is_ignored(const struct sigaction& action) {
  return !(action.sa_flags & SA_SIGINFO) && action.sa_handler == SIG_IGN;
}

void on_signal(int signal_number, siginfo_t* info, void* context);

// Where our own code lies: found when the handlers are installed.
OwnCode own_code;

// A fault (the kernel's, not a signal sent) in our own code is our bug: the
// user hears so first, whatever the program's handler then says (Python's
// faulthandler blamed XLA's compiler for a crash in the tracer's launch
// callback).
void blame_ourselves_for_our_fault(int signal_number, const siginfo_t* info, const void* context) {
  bool fault = signal_number == SIGSEGV || signal_number == SIGBUS || signal_number == SIGILL ||
               signal_number == SIGFPE;
  if (!fault || !info || info->si_code <= 0) return;
  uintptr_t pc = faulting_pc(context);
  if (!own_code.contains(pc)) return;
  int saved_errno = errno;
  char line[256];
  size_t length = describe_own_fault(line, sizeof line, signal_number, own_code, pc);
  ssize_t written = write(STDERR_FILENO, line, length);
  static_cast<void>(written);
  errno = saved_errno;
}

// What the kernel holds for a handled signal: ours, with the program's mask
// and flags (its SA_RESTART, SA_NODEFER, SA_ONSTACK keep their meaning);
// SIG_IGN itself where the program ignores the signal (the kernel then
// discards it at once, and exec keeps it ignored, as nohup needs).
void install_for(int signal_number) {
  const struct sigaction& program = state.program_actions[signal_number];
  if (is_ignored(program)) {
    libc_sigaction()(signal_number, &program, nullptr);
    return;
  }
  struct sigaction ours {};
  ours.sa_sigaction = on_signal;
  if (is_default(program)) {
    sigemptyset(&ours.sa_mask);
    // A stack overflow's SIGSEGV reaches a handler only on an alternate stack.
    ours.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
  } else {
    // SA_RESETHAND is done by hand (on_signal): the kernel's would remove ours.
    ours.sa_mask = program.sa_mask;
    ours.sa_flags = (program.sa_flags & ~SA_RESETHAND) | SA_SIGINFO;
  }
  libc_sigaction()(signal_number, &ours, nullptr);
}

// A termination signal that comes to this thread where it may hold a lock
// the writer needs (base/deferred_signal.h) is kept and raised again when
// the thread leaves: the flush below waits for the writer.
bool kept_until_out_of_locks(int signal_number) {
  if (thread_signal_deferral == 0) return false;
  sigset_t termination = termination_signals();
  if (!sigismember(&termination, signal_number)) return false;
  if (thread_deferred_signal == 0) thread_deferred_signal = signal_number;
  return true;
}

// A termination signal that comes to this thread while another writes the
// trace's end (finish(), which holds such signals blocked on its thread) is
// held, and this thread goes on; finish() sends it again once the end is
// written (resend_held_signal), and the process dies of it then. Waiting
// here for the write instead can wait for what this thread holds (a lock of
// the allocator's, CUDA's or CUPTI's that the write needs): the process
// then died at the wait's bound with its trace's end unwritten. A pool's
// SIGTERM comes so as its workers exit.
bool held_until_finished(int signal_number) {
  if (!state.finished.load() || state.final_write_done.load()) return false;
  if (getpid() != state.owner_pid.load()) return false;
  sigset_t termination = termination_signals();
  if (!sigismember(&termination, signal_number)) return false;
  int none = 0;
  state.signal_held_during_finish.compare_exchange_strong(none, signal_number);
  return true;
}

// The signal ends the process: what was recorded is written first.
void flush_before_dying(int signal_number) {
  if (getpid() != state.owner_pid.load()) return;
  if (!state.finished.load()) {
    state.writer->flush_from_signal(signal_number);
  } else {
    wait_in_handler(state.final_write_done, kSignalWriteLimitMs);  // the final write, indexes included
  }
}

// Does what would have happened without us: the program's handler runs and
// decides (it may go on, exit, or restore the default and re-raise, which
// comes back here), or, at the default action, the trace is flushed and the
// process dies of the signal, with a core where the signal makes one.
void on_signal(int signal_number, siginfo_t* info, void* context) {
  blame_ourselves_for_our_fault(signal_number, info, context);
  struct sigaction program = state.program_actions[signal_number];
  if (is_default(program)) {
    int saved_errno = errno;
    if (kept_until_out_of_locks(signal_number) || held_until_finished(signal_number)) {
      errno = saved_errno;
      return;
    }
    flush_before_dying(signal_number);
    struct sigaction default_action {};
    default_action.sa_handler = SIG_DFL;
    sigemptyset(&default_action.sa_mask);
    libc_sigaction()(signal_number, &default_action, nullptr);
    // Delivered when this handler returns (or at once under SA_NODEFER);
    // a fault re-executed meanwhile faults again, at the default action.
    raise(signal_number);
    errno = saved_errno;
    return;
  }
  if (is_ignored(program)) return;  // set between the signal and this handler
  if (program.sa_flags & SA_RESETHAND) {
    struct sigaction reset {};
    reset.sa_handler = SIG_DFL;
    sigemptyset(&reset.sa_mask);
    set_program_action(signal_number, reset);
  }
  if (program.sa_flags & SA_SIGINFO) {
    program.sa_sigaction(signal_number, info, context);
  } else {
    program.sa_handler(signal_number);
  }
}

}  // namespace

// At its default action the process dies as the signal is sent, whatever
// thread it goes to and whatever threads block it; at an action the program
// set meanwhile, that action has it.
void resend_held_signal() {
  int signal_number = state.signal_held_during_finish.exchange(0);
  if (signal_number == 0) return;
  if (is_default(state.program_actions[signal_number])) {
    struct sigaction default_action {};
    default_action.sa_handler = SIG_DFL;
    sigemptyset(&default_action.sa_mask);
    libc_sigaction()(signal_number, &default_action, nullptr);
  }
  kill(getpid(), signal_number);
}

int real_sigaction(int signal_number, const struct sigaction* action, struct sigaction* previous) {
  return libc_sigaction()(signal_number, action, previous);
}

bool keeps_program_action(int signal_number) {
  return signal_number > 0 && signal_number < NSIG && state.signal_handled[signal_number].load() &&
         getpid() == state.owner_pid.load();
}

void set_program_action(int signal_number, const struct sigaction& action) {
  // Not torn by a handler of this thread that reads it meanwhile.
  sigset_t all;
  sigfillset(&all);
  SignalsBlocked blocked(all);
  state.program_actions[signal_number] = action;
  install_for(signal_number);
}

// When tracing starts, whichever the route. Preloaded, sigaction and signal
// are interposed: the program (and a runtime that reads the dispositions as
// it starts: Python's KeyboardInterrupt handler goes only where SIGINT is at
// its default) sees and sets its own actions as if untraced, and ours stays
// in front of them. Loaded later (CUDA_INJECTION64_PATH, in-process capture),
// the program's calls reach libc: ours chains to what was there, until the
// program sets another action, which then replaces ours. A forked child
// inherits them.
void install_signal_handlers_once() {
  if (state.signal_handlers_installed.exchange(true)) return;
  own_code = own_code_of(reinterpret_cast<const void*>(&on_signal));
  for (int signal_number : kHandledSignals) {
    struct sigaction current {};
    if (libc_sigaction()(signal_number, nullptr, &current) != 0) continue;
    set_program_action(signal_number, current);
    state.signal_handled[signal_number] = true;
  }
}

}  // namespace apptracer::inject
