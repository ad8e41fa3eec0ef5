// A CUDA call that fails on purpose (an impossible allocation), then normal
// work. The program reports the error itself and exits 3, traced or not.
#include "check.h"

int main() {
  void* huge = nullptr;
  cudaError_t error = cudaMalloc(&huge, size_t(1) << 62);
  std::printf("failing_call: cudaMalloc(4 EiB) -> %s\n", cudaGetErrorName(error));
  cudaGetLastError();  // clear the sticky-free error state
  float* small;
  CHECK(cudaMalloc(&small, 1024));
  CHECK(cudaMemset(small, 0, 1024));
  CHECK(cudaFree(small));
  return error == cudaErrorMemoryAllocation ? 3 : 1;
}
