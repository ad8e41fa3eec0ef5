// The ways a process ends, one per argument, each after the same small piece
// of CUDA work (1 MiB allocation, memset, copy back):
//   thread-exit   exit(5) from a worker thread while main waits
//   _exit         _exit(6), which skips atexit handlers
//   abort         abort() half a second later: SIGABRT
//   kill          SIGKILL to itself a second later
//   term          SIGTERM to itself, at its default action
//   device-reset  cudaDeviceReset(), the same work again, normal exit
// and one without it:
//   term-before-context  a 1 MiB host block, the driver initialised
//                        (cudaGetDeviceCount), then SIGTERM before any context
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "check.h"

static void work() {
  const size_t bytes = 1 << 20;
  char* device;
  CHECK(cudaMalloc(&device, bytes));
  CHECK(cudaMemset(device, 7, bytes));
  std::vector<char> host(bytes);
  CHECK(cudaMemcpy(host.data(), device, bytes, cudaMemcpyDeviceToHost));
  if (host[bytes - 1] != 7) std::exit(1);
  std::printf("work done\n");
  std::fflush(stdout);
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  if (!std::strcmp(mode, "term-before-context")) {
    void* volatile block = std::malloc(1 << 20);
    int devices = 0;
    CHECK(cudaGetDeviceCount(&devices));
    std::printf("block %s, driver initialised\n", block ? "allocated" : "missing");
    std::fflush(stdout);
    raise(SIGTERM);
  }
  work();
  if (!std::strcmp(mode, "thread-exit")) {
    std::thread([] { std::exit(5); }).join();
  } else if (!std::strcmp(mode, "_exit")) {
    _exit(6);
  } else if (!std::strcmp(mode, "abort")) {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    std::abort();
  } else if (!std::strcmp(mode, "term")) {
    raise(SIGTERM);
  } else if (!std::strcmp(mode, "kill")) {
    std::this_thread::sleep_for(std::chrono::seconds(1));
    raise(SIGKILL);
  } else if (!std::strcmp(mode, "device-reset")) {
    CHECK(cudaDeviceReset());
    work();
    return 0;
  }
  std::fprintf(stderr,
               "usage: exit_paths thread-exit|_exit|abort|kill|term|device-reset|term-before-context\n");
  return 2;
}
