// SIGTERM sent to the process while it exits: the exiting thread holds it
// blocked while the tracer writes the trace's end, so it comes to another
// thread, one that allocates in a loop (in one malloc arena with the exiting
// thread, whose write allocates too). A sender thread waits until the
// exiting thread, past main, blocks SIGTERM, then sends it. Untraced the program exits 0
// (nothing blocks SIGTERM there, so it is never sent); traced it dies of the
// signal once the trace's end is written. With `main-blocks-term` the exiting
// thread blocks SIGTERM itself, and the sender waits for SIGHUP blocked
// there (the tracer's doing, as it writes the end): the signal must still
// end the process, where it came. No CUDA.
//   signal_while_finishing [main-blocks-term]
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace {

// Whether `signal_number` is in the thread's blocked set (/proc's SigBlk).
// Read without allocating: the allocating thread holds the one arena's lock
// most of the time, and a sender waiting for it sent too late.
bool blocked_on(const char* status_path, int signal_number) {
  char text[4096];
  int fd = open(status_path, O_RDONLY);
  if (fd < 0) return false;
  ssize_t length = read(fd, text, sizeof text - 1);
  close(fd);
  if (length <= 0) return false;
  text[length] = '\0';
  const char* line = std::strstr(text, "SigBlk:");
  if (!line) return false;
  unsigned long long mask = std::strtoull(line + 7, nullptr, 16);
  return (mask >> (signal_number - 1)) & 1;
}

}  // namespace

int main(int argc, char** argv) {
  bool main_blocks_term = argc > 1 && std::strcmp(argv[1], "main-blocks-term") == 0;
  mallopt(M_ARENA_MAX, 1);  // every thread allocates under one lock
  static char status_path[64];
  std::snprintf(status_path, sizeof status_path, "/proc/self/task/%ld/status", syscall(SYS_gettid));
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
    int watched = main_blocks_term ? SIGHUP : SIGTERM;
    std::thread([watched] {
      while (!returned || !blocked_on(status_path, watched)) {
      }
      kill(getpid(), SIGTERM);
      for (;;) pause();
    }).detach();
    pthread_sigmask(SIG_UNBLOCK, &term, nullptr);
  }
  while (!allocating) usleep(100);
  usleep(20 * 1000);
  std::printf("exiting\n");
  if (main_blocks_term) {
    sigset_t term;
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &term, nullptr);
  }
  returned = true;
  return 0;
}
