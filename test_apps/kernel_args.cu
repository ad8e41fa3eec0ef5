// Kernel arguments the tracer must resolve: const and non-const
// pointers, an interior pointer, pointers inside a struct passed by value,
// managed and mapped pinned memory, an extern "C" kernel whose integer
// argument looks like an address but points into nothing live, and a cuBLAS
// SGEMM (loaded at run time; its kernels take pointers inside a Params struct).
#include <cstdint>

#include "check.h"
#include "cublas_sgemm.h"

struct Pair {
  float* out;
  const float* in;
};

__global__ void axpy(float* y, const float* x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] += a * x[i];
}

__global__ void copy_pair(Pair p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p.out[i] = p.in[i];
}

extern "C" __global__ void scale_c(float* data, float factor, unsigned long long cookie) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i == 0 && cookie == 0) data[0] = 0;
  data[i] *= factor;
}

int main() {
  const int n = 1 << 20;
  const size_t bytes = n * sizeof(float);
  float *x, *y, *managed, *mapped_host, *mapped_device;
  CHECK(cudaMalloc(&x, bytes));
  CHECK(cudaMalloc(&y, bytes));
  CHECK(cudaMemset(x, 0, bytes));
  CHECK(cudaMemset(y, 0, bytes));
  CHECK(cudaMallocManaged(&managed, bytes));
  CHECK(cudaHostAlloc(&mapped_host, bytes, cudaHostAllocMapped));
  CHECK(cudaHostGetDevicePointer(&mapped_device, mapped_host, 0));
  for (int i = 0; i < n; ++i) managed[i] = mapped_host[i] = 1.0f;

  // Memory that was CUDA's and is no longer: its address is in range, in nothing live.
  float* gone;
  CHECK(cudaMalloc(&gone, bytes));
  CHECK(cudaFree(gone));
  unsigned long long cookie = reinterpret_cast<uintptr_t>(gone) + 64;

  axpy<<<n / 256, 256>>>(y, x, 2.0f, n);
  axpy<<<(n - 1024) / 256, 256>>>(y + 1024, x, 2.0f, n - 1024);
  copy_pair<<<n / 256, 256>>>(Pair{y, x}, n);
  axpy<<<n / 256, 256>>>(managed, mapped_device, 3.0f, n);
  scale_c<<<n / 256, 256>>>(y, 0.5f, cookie);
  CHECK(cudaDeviceSynchronize());

  const int m = 256;
  float *a, *b, *c;
  CHECK(cudaMalloc(&a, m * m * sizeof(float)));
  CHECK(cudaMalloc(&b, m * m * sizeof(float)));
  CHECK(cudaMalloc(&c, m * m * sizeof(float)));
  CHECK(cudaMemset(a, 0, m * m * sizeof(float)));
  CHECK(cudaMemset(b, 0, m * m * sizeof(float)));
  int status = run_cublas_sgemm("kernel_args", a, b, c, m);
  if (managed[0] != 4.0f) {
    std::fprintf(stderr, "kernel_args: wrong managed result %f\n", managed[0]);
    return 1;
  }
  std::printf("kernel_args: ok\n");
  return status;
}
