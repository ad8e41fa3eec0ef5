// Does a little CUDA work, then execs itself to do it again: the process
// keeps its pid, each image writes its own complete trace.
#include <unistd.h>

#include <cstring>
#include <vector>

#include "check.h"

int main(int argc, char** argv) {
  const size_t bytes = 1 << 20;
  char* device;
  CHECK(cudaMalloc(&device, bytes));
  std::vector<char> host(bytes, 1);
  CHECK(cudaMemcpy(device, host.data(), bytes, cudaMemcpyHostToDevice));
  CHECK(cudaFree(device));
  bool second = argc > 1 && !std::strcmp(argv[1], "again");
  std::printf("exec_self: %s image done\n", second ? "second" : "first");
  std::fflush(stdout);
  if (second) return 0;
  char again[] = "again";
  char* const next[] = {argv[0], again, nullptr};
  execv(argv[0], next);
  std::perror("execv");
  return 1;
}
