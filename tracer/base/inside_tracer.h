// Whether the calling thread is running the tracer's own code: an allocator
// hook, a callback's bookkeeping, a log line, the final write at exit, and for
// good the tracer's own threads (the writer, the activity flusher). What such
// code allocates or opens is ours, never the program's: the allocator hooks
// do not track it, and SQLite's files are kept out of the descriptor numbers
// the program uses (store/high_descriptors.h).
#pragma once

#include "base/deferred_signal.h"

namespace apptracer {

// `__thread`: no constructor, no lazy allocation, safe to read inside malloc.
extern __thread bool thread_inside_tracer __attribute__((tls_model("initial-exec")));

// Marks the calling thread inside the tracer for a scope (restoring what was);
// a termination signal waits for its end (base/deferred_signal.h).
class InsideTracer {
 public:
  InsideTracer() : was_inside_(thread_inside_tracer) { thread_inside_tracer = true; }
  ~InsideTracer() { thread_inside_tracer = was_inside_; }
  InsideTracer(const InsideTracer&) = delete;
  InsideTracer& operator=(const InsideTracer&) = delete;

 private:
  SignalsDeferred deferred_;  // destroyed after the mark is restored
  bool was_inside_;
};

// For a thread that runs only the tracer's code.
inline void mark_tracer_thread() { thread_inside_tracer = true; }

}  // namespace apptracer
