#include "base/signal_sets.h"

#include <pthread.h>
#include <time.h>

#include <initializer_list>

namespace apptracer {

sigset_t all_but_faults() {
  sigset_t set;
  sigfillset(&set);
  for (int fault : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS, SIGABRT}) sigdelset(&set, fault);
  return set;
}

sigset_t termination_signals() {
  sigset_t set;
  sigemptyset(&set);
  for (int signal : {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGALRM, SIGUSR1, SIGUSR2}) sigaddset(&set, signal);
  return set;
}

SignalsBlocked::SignalsBlocked(const sigset_t& set) { pthread_sigmask(SIG_BLOCK, &set, &previous_); }

SignalsBlocked::~SignalsBlocked() { pthread_sigmask(SIG_SETMASK, &previous_, nullptr); }

bool wait_in_handler(const std::atomic<bool>& done, int limit_ms) {
  constexpr int kStepMs = 10;
  for (int waited = 0; waited < limit_ms && !done.load(); waited += kStepMs) {
    timespec step{0, kStepMs * 1000 * 1000};
    nanosleep(&step, nullptr);
  }
  return done.load();
}

}  // namespace apptracer
