// Eight host threads, each with its own stream, buffer and 100 launches.
#include <thread>
#include <vector>

#include "check.h"

__global__ void increment(int* data, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] += 1;
}

constexpr int kThreads = 8;
constexpr int kLaunches = 100;
constexpr int kElements = 4096;

int main() {
  std::vector<std::thread> threads;
  std::vector<int> failures(kThreads, 0);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t, &failures] {
      cudaStream_t stream;
      CHECK(cudaStreamCreate(&stream));
      int* data;
      CHECK(cudaMalloc(&data, kElements * sizeof(int)));
      CHECK(cudaMemsetAsync(data, 0, kElements * sizeof(int), stream));
      for (int i = 0; i < kLaunches; ++i) increment<<<kElements / 256, 256, 0, stream>>>(data, kElements);
      std::vector<int> host(kElements);
      CHECK(cudaMemcpyAsync(host.data(), data, kElements * sizeof(int), cudaMemcpyDeviceToHost, stream));
      CHECK(cudaStreamSynchronize(stream));
      for (int v : host) failures[t] += v != kLaunches;
      CHECK(cudaFree(data));
      CHECK(cudaStreamDestroy(stream));
    });
  }
  for (auto& thread : threads) thread.join();
  for (int f : failures) {
    if (f) return 1;
  }
  std::printf("multithreaded: ok\n");
  return 0;
}
