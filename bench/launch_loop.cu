// Launch-bound loops, timed on the host: N calls of one cheap CUDA operation,
// so what tracing adds per call dominates. Prints "<ns per call>" for
// compare.sh.
//   launch_loop [launch|memcpy-async|launch-after-work] [N]
//     launch             empty<<<1, 1>>>() (cudaLaunchKernel)
//     memcpy-async       cudaMemcpyAsync of 64 bytes, pinned host -> device
//     launch-after-work  the same launch after host work of its own (walking
//                        512 KiB, 10-25 us), as a framework's dispatcher
//                        works between its launches: beside `launch`, what
//                        tracing adds to the host's work between calls
//                        (colder caches, the tracer's threads), which a cost
//                        per call measured in a tight loop leaves out
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <cuda_runtime.h>

__global__ void empty() {}

namespace {

constexpr size_t kCopyBytes = 64;
constexpr size_t kWorkWords = 64 * 1024;  // 512 KiB: the host's own data, L2-sized
constexpr int kWorkSteps = 2048;

// Host work whose result the loop keeps (so it is not optimized away): a
// walk through `words` whose next index depends on the last word read.
uint64_t host_work(const std::vector<uint64_t>& words, uint64_t seed) {
  uint64_t acc = seed;
  for (int step = 0; step < kWorkSteps; ++step) acc = acc * 31 + words[(acc + step) & (kWorkWords - 1)];
  return acc;
}

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
  } else if (std::strcmp(mode, "launch-after-work") == 0) {
    std::vector<uint64_t> words(kWorkWords);
    for (size_t i = 0; i < words.size(); ++i) words[i] = i * 0x9e3779b97f4a7c15ull;
    uint64_t kept = 0;
    ns = ns_per_call(calls, [&] {
      kept = host_work(words, kept);
      empty<<<1, 1>>>();
    });
    if (kept == 42) std::fprintf(stderr, "launch_loop: %llu\n", static_cast<unsigned long long>(kept));
  } else {
    std::fprintf(stderr, "usage: launch_loop [launch|memcpy-async|launch-after-work] [N]\n");
    return 2;
  }
  std::printf("%.1f\n", ns);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
