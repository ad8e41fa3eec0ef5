// A peer-to-peer copy between two GPUs. With fewer than two, says so and
// exits 77 (skipped).
#include "check.h"

int main() {
  int devices = 0;
  CHECK(cudaGetDeviceCount(&devices));
  if (devices < 2) {
    std::printf("peer_copy: needs 2 GPUs, found %d\n", devices);
    return 77;
  }
  const size_t bytes = 8 << 20;
  void *on0, *on1;
  CHECK(cudaSetDevice(0));
  CHECK(cudaMalloc(&on0, bytes));
  CHECK(cudaMemset(on0, 1, bytes));
  CHECK(cudaSetDevice(1));
  CHECK(cudaMalloc(&on1, bytes));
  CHECK(cudaMemcpyPeer(on1, 1, on0, 0, bytes));
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaFree(on1));
  CHECK(cudaSetDevice(0));
  CHECK(cudaFree(on0));
  std::printf("peer_copy: ok\n");
  return 0;
}
