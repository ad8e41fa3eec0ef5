// Signals as the tracer handles them on its own behalf (base/signal_sets.cpp):
// the sets it blocks, a scope that blocks one, and the wait its handlers do.
#pragma once

#include <signal.h>

#include <atomic>

namespace apptracer {

// Every signal but the faults a thread raises on itself (a fault while
// blocked kills the process): for threads that must never run a handler.
sigset_t all_but_faults();
// Signals sent from outside that end a process by default (kill, Ctrl-C,
// timers, hang-up): held on a thread while it writes the trace's end.
sigset_t termination_signals();

// Blocks `set` on the calling thread until the scope ends; threads created
// meanwhile start with it blocked.
class SignalsBlocked {
 public:
  explicit SignalsBlocked(const sigset_t& set);
  ~SignalsBlocked();
  SignalsBlocked(const SignalsBlocked&) = delete;
  SignalsBlocked& operator=(const SignalsBlocked&) = delete;

 private:
  sigset_t previous_;
};

// Async-signal-safe (nanosleep): waits until `done` is set, at most about
// `limit_ms`; whether it was set.
bool wait_in_handler(const std::atomic<bool>& done, int limit_ms);

// How long a handler waits for the trace to be written before the process
// dies of its signal. The wait ends as soon as the write does (tens of ms);
// the bound is for a writer that cannot finish, and is generous because a
// loaded machine (a pool's workers all terminated at once, each opening its
// trace) took over a second to write what an idle one writes at once.
constexpr int kSignalWriteLimitMs = 5000;

}  // namespace apptracer
