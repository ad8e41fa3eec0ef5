// Stream-ordered allocation: cudaMallocAsync / cudaFreeAsync from the default
// pool and from a pool the program creates.
#include "check.h"

__global__ void touch(int* data, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] = i;
}

int main() {
  const int n = 1 << 18;
  cudaStream_t stream;
  CHECK(cudaStreamCreate(&stream));
  int* from_default;
  CHECK(cudaMallocAsync(&from_default, n * sizeof(int), stream));
  touch<<<n / 256, 256, 0, stream>>>(from_default, n);
  CHECK(cudaFreeAsync(from_default, stream));
  cudaMemPoolProps props = {};
  props.allocType = cudaMemAllocationTypePinned;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = 0;
  cudaMemPool_t pool;
  CHECK(cudaMemPoolCreate(&pool, &props));
  int* from_pool;
  CHECK(cudaMallocFromPoolAsync(&from_pool, n * sizeof(int), pool, stream));
  touch<<<n / 256, 256, 0, stream>>>(from_pool, n);
  CHECK(cudaFreeAsync(from_pool, stream));
  CHECK(cudaStreamSynchronize(stream));
  CHECK(cudaMemPoolDestroy(pool));
  CHECK(cudaStreamDestroy(stream));
  std::printf("malloc_async: ok\n");
  return 0;
}
