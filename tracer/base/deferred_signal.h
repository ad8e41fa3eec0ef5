// A termination signal that comes to a thread while it may hold a lock the
// trace writer needs is kept until the thread leaves that code, then raised
// again there. The handler of such a signal waits for the writer to mark the
// trace's end, and the writer frees and allocates: a program thread stopped
// inside malloc held the allocator's lock the writer then waited for, and the
// process died at the wait's bound with its trace's end unwritten (pool
// workers terminated while they worked, 1 run in 8). The scopes are the
// interposed allocator functions and the tracer's own code (InsideTracer).
#pragma once

#include <cstdint>

namespace apptracer {

// How many deferring scopes the calling thread is in, and the signal kept.
extern __thread uint32_t thread_signal_deferral __attribute__((tls_model("initial-exec")));
extern __thread int thread_deferred_signal __attribute__((tls_model("initial-exec")));

// Raises the kept signal on the calling thread (once out of every scope).
void raise_deferred_signal();

class SignalsDeferred {
 public:
  SignalsDeferred() { ++thread_signal_deferral; }
  ~SignalsDeferred() {
    if (--thread_signal_deferral == 0 && thread_deferred_signal != 0) raise_deferred_signal();
  }
  SignalsDeferred(const SignalsDeferred&) = delete;
  SignalsDeferred& operator=(const SignalsDeferred&) = delete;
};

}  // namespace apptracer
