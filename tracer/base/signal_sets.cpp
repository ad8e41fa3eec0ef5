#include "base/signal_sets.h"

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

}  // namespace apptracer
