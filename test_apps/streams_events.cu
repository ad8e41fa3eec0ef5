// Two streams ordered by an event: stream 1 fills a buffer, stream 2 waits on
// the event and copies it out. Async copies from pinned memory.
#include "check.h"

__global__ void fill(int* data, int n, int value) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] = value;
}

int main() {
  const int n = 1 << 16;
  const size_t bytes = n * sizeof(int);
  int *host, *device;
  CHECK(cudaMallocHost(&host, bytes));
  CHECK(cudaMalloc(&device, bytes));
  cudaStream_t producer, consumer;
  CHECK(cudaStreamCreate(&producer));
  CHECK(cudaStreamCreate(&consumer));
  cudaEvent_t filled;
  CHECK(cudaEventCreateWithFlags(&filled, cudaEventDisableTiming));
  fill<<<n / 256, 256, 0, producer>>>(device, n, 7);
  CHECK(cudaEventRecord(filled, producer));
  CHECK(cudaStreamWaitEvent(consumer, filled, 0));
  CHECK(cudaMemcpyAsync(host, device, bytes, cudaMemcpyDeviceToHost, consumer));
  CHECK(cudaStreamSynchronize(consumer));
  for (int i = 0; i < n; ++i) {
    if (host[i] != 7) return 1;
  }
  CHECK(cudaEventDestroy(filled));
  CHECK(cudaStreamDestroy(producer));
  CHECK(cudaStreamDestroy(consumer));
  CHECK(cudaFree(device));
  CHECK(cudaFreeHost(host));
  std::printf("streams_events: ok\n");
  return 0;
}
