// Forks twice before using CUDA (as DataLoader workers do); each child uses
// CUDA itself, the parent too. Every process must get its own trace.
#include <sys/wait.h>
#include <unistd.h>

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

int main() {
  pid_t children[2];
  for (int c = 0; c < 2; ++c) {
    children[c] = fork();
    if (children[c] == 0) return copy_round_trip((c + 1) << 20);
  }
  int failed = 0;
  for (pid_t child : children) {
    int status = 0;
    waitpid(child, &status, 0);
    failed += !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  copy_round_trip(4 << 20);
  std::printf("forking: %d children failed\n", failed);
  return failed;
}
