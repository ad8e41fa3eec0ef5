// Forks twice before using CUDA (as DataLoader workers do); each child uses
// CUDA itself, the parent too. Every process must get its own trace.
// `--term`: each child then ends by SIGTERM, as multiprocessing's forkserver
// workers do when their pool is terminated.
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstring>

#include "check.h"

static int copy_round_trip(size_t bytes) {
  char* device;
  CHECK(cudaMalloc(&device, bytes));
  char* host = static_cast<char*>(std::malloc(bytes));
  CHECK(cudaMemcpy(device, host, bytes, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(host, device, bytes, cudaMemcpyDeviceToHost));
  CHECK(cudaFree(device));
  std::free(host);
  return 0;
}

int main(int argc, char** argv) {
  bool terminated = argc > 1 && std::strcmp(argv[1], "--term") == 0;
  pid_t children[2];
  for (int c = 0; c < 2; ++c) {
    children[c] = fork();
    if (children[c] == 0) {
      int result = copy_round_trip((c + 1) << 20);
      if (terminated) raise(SIGTERM);
      return result;
    }
  }
  int failed = 0;
  for (pid_t child : children) {
    int status = 0;
    waitpid(child, &status, 0);
    bool ended_as_asked = terminated ? WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM
                                     : WIFEXITED(status) && WEXITSTATUS(status) == 0;
    failed += !ended_as_asked;
  }
  copy_round_trip(4 << 20);
  std::printf("forking: %d children failed\n", failed);
  return failed;
}
