// The probe `apptracer record --exact` runs first (exact_probe.h):
// two kernels whose accesses are known to the byte. a (4 KiB) is
// incremented in place: read and written whole; then copied to b: a read,
// b written. Exit status 0 when CUDA worked, 77 when there is no usable GPU.
#include <cuda_runtime.h>

#include <cstdio>

__global__ void apptracer_probe_increment(float* a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] += 1.0f;
}

__global__ void apptracer_probe_copy(float* dst, const float* src, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) dst[i] = src[i];
}

constexpr int kNoGpu = 77;  // record --exact: exact mode is unavailable

int main() {
  const int n = 1024;  // 4 KiB of floats
  float *a = nullptr, *b = nullptr;
  if (cudaMalloc(&a, n * sizeof(float)) != cudaSuccess ||
      cudaMalloc(&b, n * sizeof(float)) != cudaSuccess) {
    std::fprintf(stderr, "apptracer-exact-probe: no usable GPU\n");
    return kNoGpu;
  }
  cudaMemset(a, 0, n * sizeof(float));
  apptracer_probe_increment<<<n / 256, 256>>>(a, n);
  apptracer_probe_copy<<<n / 256, 256>>>(b, a, n);
  cudaError_t status = cudaDeviceSynchronize();
  cudaFree(a);
  cudaFree(b);
  return status == cudaSuccess ? 0 : 1;
}
