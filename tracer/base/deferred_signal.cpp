#include "base/deferred_signal.h"

#include <signal.h>

namespace apptracer {

__thread uint32_t thread_signal_deferral __attribute__((tls_model("initial-exec"))) = 0;
__thread int thread_deferred_signal __attribute__((tls_model("initial-exec"))) = 0;

void raise_deferred_signal() {
  int signal_number = thread_deferred_signal;
  thread_deferred_signal = 0;
  raise(signal_number);
}

}  // namespace apptracer
