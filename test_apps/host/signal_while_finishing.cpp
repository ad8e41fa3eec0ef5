// SIGTERM sent to the process while it exits: the exiting thread holds it
// blocked while the tracer writes the trace's end, so it comes to another
// thread, one that allocates in a loop (in one malloc arena with the exiting
// thread, whose write allocates too). A sender thread waits until the
// exiting thread, past main, blocks SIGTERM, then sends it. Untraced the program exits 0
// (nothing blocks SIGTERM there, so it is never sent); traced it dies of the
// signal once the trace's end is written. No CUDA.
//   signal_while_finishing
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>

namespace {

// Whether `signal_number` is in the thread's blocked set (/proc's SigBlk).
bool blocked_on(pid_t tid, int signal_number) {
  std::ifstream status("/proc/self/task/" + std::to_string(tid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("SigBlk:", 0) == 0) {
      unsigned long long mask = std::strtoull(line.c_str() + 7, nullptr, 16);
      return (mask >> (signal_number - 1)) & 1;
    }
  }
  return false;
}

}  // namespace

int main() {
  mallopt(M_ARENA_MAX, 1);  // every thread allocates under one lock
  pid_t exiting = static_cast<pid_t>(syscall(SYS_gettid));
  static std::atomic<bool> allocating{false};
  static std::atomic<bool> returned{false};
  std::thread([] {
    allocating = true;
    for (;;) {
      std::free(std::malloc(64 << 10));
      malloc_trim(0);
    }
  }).detach();
  {
    // The sender never takes the signal itself.
    sigset_t term;
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &term, nullptr);
    std::thread([exiting] {
      while (!returned || !blocked_on(exiting, SIGTERM)) {
      }
      kill(getpid(), SIGTERM);
      for (;;) pause();
    }).detach();
    pthread_sigmask(SIG_UNBLOCK, &term, nullptr);
  }
  while (!allocating) usleep(100);
  usleep(20 * 1000);
  std::printf("exiting\n");
  returned = true;
  return 0;
}
