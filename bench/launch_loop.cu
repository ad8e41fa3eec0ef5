// Launch-bound loops, timed on the host: N calls of one cheap CUDA operation,
// so what tracing adds per call dominates. Prints "<ns per call>" for
// compare.sh.
//   launch_loop [launch|memcpy-async] [N]
//     launch        empty<<<1, 1>>>() (cudaLaunchKernel)
//     memcpy-async  cudaMemcpyAsync of 64 bytes, pinned host -> device
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <cuda_runtime.h>

__global__ void empty() {}

namespace {

constexpr size_t kCopyBytes = 64;

template <typename Call>
double ns_per_call(int calls, Call call) {
  call();  // context creation, module load and first-use costs stay outside the timing
  cudaDeviceSynchronize();
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < calls; ++i) call();
  cudaDeviceSynchronize();
  return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count() / calls;
}

}  // namespace

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "launch";
  int calls = argc > 2 ? std::atoi(argv[2]) : 100000;
  double ns = 0;
  if (std::strcmp(mode, "launch") == 0) {
    ns = ns_per_call(calls, [] { empty<<<1, 1>>>(); });
  } else if (std::strcmp(mode, "memcpy-async") == 0) {
    // Pinned source: the copy is truly asynchronous, so the loop measures the
    // call, not a staging copy.
    void* host = nullptr;
    void* device = nullptr;
    if (cudaMallocHost(&host, kCopyBytes) != cudaSuccess || cudaMalloc(&device, kCopyBytes) != cudaSuccess) {
      std::fprintf(stderr, "launch_loop: cannot allocate the copy buffers\n");
      return 1;
    }
    ns = ns_per_call(calls, [&] { cudaMemcpyAsync(device, host, kCopyBytes, cudaMemcpyHostToDevice); });
    cudaFree(device);
    cudaFreeHost(host);
  } else {
    std::fprintf(stderr, "usage: launch_loop [launch|memcpy-async] [N]\n");
    return 2;
  }
  std::printf("%.1f\n", ns);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
