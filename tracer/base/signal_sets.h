// Sets of signals the tracer blocks on its own behalf (base/signal_sets.cpp).
#pragma once

#include <signal.h>

namespace apptracer {

// Every signal but the faults a thread raises on itself (a fault while
// blocked kills the process): for threads that must never run a handler.
sigset_t all_but_faults();
// Signals sent from outside that end a process by default (kill, Ctrl-C,
// timers, hang-up): held on a thread while it writes the trace's end.
sigset_t termination_signals();

}  // namespace apptracer
