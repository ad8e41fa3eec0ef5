// A kernel on GPU 0 storing 16 MiB straight into GPU 1's memory through
// peer access, then one on GPU 0 reading it back the same way: bytes that
// cross the GPUs' link with no copy. With fewer than two GPUs, or without
// peer access between them, says so and exits 77 (skipped).
#include <cstdint>

#include "check.h"

__global__ void store_values(uint32_t* out, size_t n) {
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += size_t{gridDim.x} * blockDim.x)
    out[i] = static_cast<uint32_t>(i);
}

__global__ void sum_values(const uint32_t* in, size_t n, unsigned long long* total) {
  unsigned long long mine = 0;
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += size_t{gridDim.x} * blockDim.x)
    mine += in[i];
  atomicAdd(total, mine);
}

int main() {
  int devices = 0;
  CHECK(cudaGetDeviceCount(&devices));
  if (devices < 2) {
    std::printf("peer_store: needs 2 GPUs, found %d\n", devices);
    return 77;
  }
  int can_access = 0;
  CHECK(cudaDeviceCanAccessPeer(&can_access, 0, 1));
  if (!can_access) {
    std::printf("peer_store: GPU 0 cannot access GPU 1's memory\n");
    return 77;
  }
  const size_t bytes = 16 << 20;
  const size_t n = bytes / sizeof(uint32_t);
  uint32_t* on1 = nullptr;
  CHECK(cudaSetDevice(1));
  CHECK(cudaMalloc(&on1, bytes));
  CHECK(cudaSetDevice(0));
  CHECK(cudaDeviceEnablePeerAccess(1, 0));
  unsigned long long* total = nullptr;
  CHECK(cudaMalloc(&total, sizeof *total));
  CHECK(cudaMemset(total, 0, sizeof *total));
  store_values<<<256, 256>>>(on1, n);
  CHECK(cudaGetLastError());
  sum_values<<<256, 256>>>(on1, n, total);
  CHECK(cudaGetLastError());
  unsigned long long result = 0;
  CHECK(cudaMemcpy(&result, total, sizeof result, cudaMemcpyDeviceToHost));
  const unsigned long long expected = static_cast<unsigned long long>(n) * (n - 1) / 2;
  if (result != expected) {
    std::fprintf(stderr, "peer_store: sum %llu, expected %llu\n", result, expected);
    return 1;
  }
  CHECK(cudaFree(total));
  CHECK(cudaFree(on1));
  std::printf("peer_store: ok\n");
  return 0;
}
