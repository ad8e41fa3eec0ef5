// Memsets: whole buffer, an interior range, async on a stream, and 2D.
#include "check.h"

int main() {
  const size_t bytes = 1 << 20;
  char* device;
  CHECK(cudaMalloc(&device, bytes));
  CHECK(cudaMemset(device, 0, bytes));
  CHECK(cudaMemset(device + 4096, 0xab, 8192));
  cudaStream_t stream;
  CHECK(cudaStreamCreate(&stream));
  CHECK(cudaMemsetAsync(device, 1, bytes / 2, stream));
  CHECK(cudaStreamSynchronize(stream));
  char* pitched;
  size_t pitch = 0;
  CHECK(cudaMallocPitch(&pitched, &pitch, 256, 32));
  CHECK(cudaMemset2D(pitched, pitch, 3, 256, 32));
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaFree(pitched));
  CHECK(cudaStreamDestroy(stream));
  CHECK(cudaFree(device));
  std::printf("memsets: ok\n");
  return 0;
}
