// One last flush when a signal ends the process: fatal signals, and SIGTERM
// where it still kills. Our handlers chain to the ones they replaced.
#include <signal.h>
#include <unistd.h>

#include "base/signal_sets.h"
#include "inject/lifecycle.h"
#include "store/writer.h"

namespace apptracer::inject {

namespace {

// The signals a crash raises: chained to whatever handler is there.
const int kFatalSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
// SIGTERM only where it still kills the process (its default action):
// multiprocessing's Pool and PyTorch's DataLoader end their workers with it,
// and a worker killed before the writer's next pass lost its last GPU work
// (seen on the H100: every pool worker's trace incomplete, kernels without
// GPU times). The process still dies of SIGTERM, after the flush. Not
// SIGINT: Python installs its KeyboardInterrupt handler only where SIGINT is
// at its default. A program that installs its own handler later replaces
// ours (Python's signal.getsignal never sees ours: it reads dispositions at
// startup), and then ends as it chooses.
const int kTerminationSignals[] = {SIGTERM};

// Flushes what was recorded, then does what would have happened without us:
// the handler that was there before ours runs, or the default action.
void on_fatal_signal(int signal_number, siginfo_t* info, void* context) {
  if (getpid() == state.owner_pid.load()) {
    if (!state.finished.load()) {
      state.writer->flush_from_signal(signal_number);
    } else {
      wait_in_handler(state.final_write_done, 5000);  // the final write, indexes included
    }
  }
  const struct sigaction& previous = state.previous_actions[signal_number];
  sigaction(signal_number, &previous, nullptr);
  if (previous.sa_flags & SA_SIGINFO) {
    previous.sa_sigaction(signal_number, info, context);
  } else if (previous.sa_handler == SIG_DFL) {
    raise(signal_number);
  } else if (previous.sa_handler != SIG_IGN) {
    previous.sa_handler(signal_number);
  }
}

}  // namespace

// Chained: the program's (or Python's faulthandler's) handlers stay in
// force, before ours (installed earlier) or after (they find ours and call it).
// Installed at the first CUDA context, not at load: a runtime that reads the
// dispositions when it starts (Python's signal.getsignal) still sees its own,
// and before a context there is no GPU activity a crash could lose. A forked
// child that goes on tracing installs them at once (after_fork_in_child).
void install_signal_handlers_once() {
  if (state.signal_handlers_installed.exchange(true)) return;
  struct sigaction ours {};
  ours.sa_sigaction = on_fatal_signal;
  sigemptyset(&ours.sa_mask);
  ours.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
  for (int signal_number : kFatalSignals) {
    sigaction(signal_number, &ours, &state.previous_actions[signal_number]);
  }
  for (int signal_number : kTerminationSignals) {
    struct sigaction current {};
    sigaction(signal_number, nullptr, &current);
    bool kills = !(current.sa_flags & SA_SIGINFO) && current.sa_handler == SIG_DFL;
    if (kills) sigaction(signal_number, &ours, &state.previous_actions[signal_number]);
  }
}

}  // namespace apptracer::inject
