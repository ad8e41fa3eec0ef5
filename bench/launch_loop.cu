// Launch-bound loop: N launches of an empty kernel, timed on the host.
// Prints "<ns per launch>" so a driver script can compare traced and untraced.
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include <cuda_runtime.h>

__global__ void empty() {}

int main(int argc, char** argv) {
  int launches = argc > 1 ? std::atoi(argv[1]) : 100000;
  empty<<<1, 1>>>();  // context creation and module load stay outside the timing
  cudaDeviceSynchronize();
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < launches; ++i) empty<<<1, 1>>>();
  cudaDeviceSynchronize();
  auto ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
  std::printf("%.1f\n", ns / launches);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
