// Copy-bound: round trips host -> GPU -> host of several sizes, with a small
// kernel on each, all on one stream. `--pinned` takes the host buffers from
// cudaMallocHost instead of malloc: the pinned twin of the pageable run,
// what `apptracer whatif --pin` predicts from the pageable one
// (bench/whatif_validation.sh).
//
//   whatif_copies [--pinned] [--iterations N]
//
// Phases, each ended by a cudaDeviceSynchronize (whatif's periods): 1 set-up
// (context, buffers, first touch of every page), 2 the copies (the part the
// validation compares), 3 clean-up.
#include <cstdlib>
#include <cstring>
#include <string>

#include "check.h"

namespace {

// Sizes at and between those `apptracer links --quick` measures.
constexpr size_t kSizes[] = {size_t(256) << 10, size_t(4) << 20, size_t(16) << 20, size_t(64) << 20};
constexpr size_t kLargest = size_t(64) << 20;

__global__ void increment(unsigned char* data, size_t bytes) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < bytes; i += size_t(gridDim.x) * blockDim.x) {
    data[i] = static_cast<unsigned char>(data[i] + 1);
  }
}

unsigned char* host_buffer(bool pinned) {
  void* buffer = nullptr;
  if (pinned) {
    CHECK(cudaMallocHost(&buffer, kLargest));
  } else {
    buffer = std::malloc(kLargest);
    if (!buffer) std::exit(1);
  }
  return static_cast<unsigned char*>(buffer);
}

}  // namespace

int main(int argc, char** argv) {
  bool pinned = false;
  int iterations = 5;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--pinned") {
      pinned = true;
    } else if (arg == "--iterations" && i + 1 < argc) {
      iterations = std::atoi(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: whatif_copies [--pinned] [--iterations N]\n");
      return 2;
    }
  }
  CHECK(cudaFree(nullptr));
  cudaStream_t stream;
  CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  unsigned char* in = host_buffer(pinned);
  unsigned char* out = host_buffer(pinned);
  unsigned char* device;
  CHECK(cudaMalloc(&device, kLargest));
  std::memset(in, 1, kLargest);
  std::memset(out, 0, kLargest);
  CHECK(cudaDeviceSynchronize());

  for (int iteration = 0; iteration < iterations; ++iteration) {
    for (size_t bytes : kSizes) {
      CHECK(cudaMemcpyAsync(device, in, bytes, cudaMemcpyHostToDevice, stream));
      increment<<<264, 256, 0, stream>>>(device, bytes);
      CHECK(cudaMemcpyAsync(out, device, bytes, cudaMemcpyDeviceToHost, stream));
    }
  }
  CHECK(cudaDeviceSynchronize());

  bool ok = out[0] == 2 && out[kLargest - 1] == 2;
  CHECK(cudaFree(device));
  if (pinned) {
    CHECK(cudaFreeHost(in));
    CHECK(cudaFreeHost(out));
  } else {
    std::free(in);
    std::free(out);
  }
  CHECK(cudaStreamDestroy(stream));
  CHECK(cudaDeviceSynchronize());
  std::printf("whatif_copies: %s (%s, %d iterations)\n", ok ? "ok" : "WRONG RESULT",
              pinned ? "pinned" : "pageable", iterations);
  return ok ? 0 : 1;
}
