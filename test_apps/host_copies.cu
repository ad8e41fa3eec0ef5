// Copies between the GPU and host memory from every source a program has:
// malloc, new[], an anonymous mmap, the stack, an interior pointer, and a
// malloc'd block registered with CUDA. check_trace.py asserts each copy
// resolves to the right host allocation and offset (the stack to none), and
// that a block CUDA never touches is no row. Sizes are unique so rows can be
// found by size.
#include <sys/mman.h>

#include <cstdlib>
#include <cstring>

#include "check.h"

int main() {
  const size_t mib = 1 << 20;
  char* device;
  CHECK(cudaMalloc(&device, 4 * mib));
  auto* from_malloc = static_cast<char*>(std::malloc(mib + 1));
  char* from_new = new char[mib + 2];
  auto* from_mmap = static_cast<char*>(
      mmap(nullptr, mib + 3, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  auto* registered = static_cast<char*>(std::malloc(mib + 4));
  auto* untouched = static_cast<char*>(std::malloc(mib + 5));
  char on_stack[4096];
  if (from_mmap == MAP_FAILED) return 1;
  std::memset(from_malloc, 1, mib + 1);
  std::memset(from_new, 2, mib + 2);
  std::memset(from_mmap, 3, mib + 3);
  std::memset(registered, 4, mib + 4);
  std::memset(untouched, 5, mib + 5);
  std::memset(on_stack, 6, sizeof on_stack);

  CHECK(cudaMemcpy(device, from_malloc, mib, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(device + mib, from_new + 4096, mib - 4096, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(device + 2 * mib, from_mmap, mib, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(device + 3 * mib, on_stack, sizeof on_stack, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(from_malloc + 8192, device + mib, 1000, cudaMemcpyDeviceToHost));
  CHECK(cudaHostRegister(registered, mib + 4, cudaHostRegisterDefault));
  CHECK(cudaMemcpy(device, registered, mib, cudaMemcpyHostToDevice));
  CHECK(cudaHostUnregister(registered));

  // from_new + 4096 holds 2s, so the 1000 bytes copied back are 2s.
  for (int i = 0; i < 1000; ++i) {
    if (from_malloc[8192 + i] != 2) {
      std::fprintf(stderr, "host_copies: wrong byte at %d\n", i);
      return 1;
    }
  }
  std::printf("host_copies: ok (untouched %d)\n", untouched[mib]);
  std::free(untouched);
  std::free(registered);
  munmap(from_mmap, mib + 3);
  delete[] from_new;
  std::free(from_malloc);
  CHECK(cudaFree(device));
  return 0;
}
