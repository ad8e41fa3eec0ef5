// Every host allocation kind, each the source of one copy, so the trace shows
// which memory kind each copy read: pinned, portable, mapped, write-combined,
// registered, pageable; then managed memory and a pitched 2D allocation.
#include <cstdlib>

#include "check.h"

int main() {
  const size_t bytes = 1 << 20;
  char* device;
  CHECK(cudaMalloc(&device, bytes));
  void *pinned, *portable, *mapped, *write_combined;
  CHECK(cudaMallocHost(&pinned, bytes));
  CHECK(cudaHostAlloc(&portable, bytes, cudaHostAllocPortable));
  CHECK(cudaHostAlloc(&mapped, bytes, cudaHostAllocMapped));
  CHECK(cudaHostAlloc(&write_combined, bytes, cudaHostAllocWriteCombined));
  void* registered = std::aligned_alloc(4096, bytes);
  CHECK(cudaHostRegister(registered, bytes, cudaHostRegisterDefault));
  void* pageable = std::malloc(bytes);
  for (void* source : {pinned, portable, mapped, write_combined, registered, pageable}) {
    CHECK(cudaMemcpy(device, source, bytes, cudaMemcpyHostToDevice));
  }
  char* managed;
  CHECK(cudaMallocManaged(&managed, bytes));
  CHECK(cudaMemcpy(managed, device, bytes, cudaMemcpyDefault));
  char* pitched;
  size_t pitch = 0;
  CHECK(cudaMallocPitch(&pitched, &pitch, 1000, 64));
  CHECK(cudaMemcpy2D(pitched, pitch, pinned, 1000, 1000, 64, cudaMemcpyHostToDevice));
  CHECK(cudaFree(pitched));
  CHECK(cudaFree(managed));
  CHECK(cudaHostUnregister(registered));
  std::free(registered);
  std::free(pageable);
  for (void* host : {pinned, portable, mapped, write_combined}) CHECK(cudaFreeHost(host));
  CHECK(cudaFree(device));
  std::printf("host_alloc_kinds: ok\n");
  return 0;
}
