// Kernels whose global-memory accesses are known to the byte, for
// `apptracer record --exact` (check_trace.py, case exact_patterns). Each
// buffer has a size of its own (KiB: 8, 12, 16, ... 52) so the check finds it
// by size. Last, a cuBLAS SGEMM on three buffers of 40,000 bytes (A and B
// read whole, C written whole). Exit status 0 when CUDA worked.
#include <cuda_runtime.h>

#include <cstdio>

#include "cublas_sgemm.h"

constexpr int kN = 1024;  // elements each kernel covers: 4 KiB of floats or ints

// Writes the first half of an 8 KiB buffer.
__global__ void partial_write(float* a) { a[threadIdx.x + blockIdx.x * blockDim.x] = 1.0f; }

// Reads one float in every 64 bytes (every other 32-byte granule).
__global__ void strided_read(const float* src, float* dst) {
  int i = threadIdx.x;
  dst[i] = src[i * 16];
}

// A non-const pointer the kernel only reads.
__global__ void only_read(float* x, float* y) {
  int i = threadIdx.x + blockIdx.x * blockDim.x;
  y[i] = 2.0f * x[i];
}

__global__ void in_place(float* a) { a[threadIdx.x + blockIdx.x * blockDim.x] += 1.0f; }

// Each thread writes its element, then reads it back: written, not read first.
__global__ void write_then_read(float* a, float* out) {
  int i = threadIdx.x + blockIdx.x * blockDim.x;
  a[i] = static_cast<float>(i);
  out[i] = a[i] * 2.0f;
}

__global__ void histogram(const int* in, int* bins) {
  int i = threadIdx.x + blockIdx.x * blockDim.x;
  atomicAdd(&bins[in[i] & 15], 1);
}

// Handed 4 KiB, reads 32 bytes past them.
__global__ void read_past(const float* a, float* out) {
  int i = threadIdx.x + blockIdx.x * blockDim.x;
  out[i] = a[i] + (i < 8 ? a[kN + i] : 0.0f);
}

int main() {
  float* f[12] = {};
  // What lies past read_past's input: no buffer the kernel is handed (the
  // driver places consecutive small allocations back to back, H100).
  float* guard = nullptr;
  for (int k = 0; k < 12; ++k) {
    size_t bytes = size_t(4096) * (k + 2);
    if (k == 10) bytes = 4096;  // read_past's input: exactly what it is handed
    if (cudaMalloc(&f[k], bytes) != cudaSuccess || cudaMemset(f[k], 0, bytes) != cudaSuccess ||
        (k == 10 && cudaMalloc(&guard, 2048) != cudaSuccess)) {
      std::fprintf(stderr, "exact_patterns: no usable GPU\n");
      return 77;
    }
  }
  partial_write<<<kN / 256, 256>>>(f[0]);
  strided_read<<<1, 64>>>(f[1], f[2]);
  only_read<<<kN / 256, 256>>>(f[3], f[4]);
  in_place<<<kN / 256, 256>>>(f[5]);
  write_then_read<<<kN / 256, 256>>>(f[6], f[7]);
  histogram<<<kN / 256, 256>>>(reinterpret_cast<int*>(f[8]), reinterpret_cast<int*>(f[9]));
  read_past<<<kN / 256, 256>>>(f[10], f[11]);
  cudaError_t status = cudaDeviceSynchronize();
  for (float* p : f) cudaFree(p);
  cudaFree(guard);
  std::printf("exact_patterns: %s\n", cudaGetErrorString(status));
  if (status != cudaSuccess) return 1;

  constexpr int kGemm = 100;  // 40,000 bytes a matrix: no other buffer's size
  float* gemm[3] = {};
  for (float*& m : gemm) {
    CHECK(cudaMalloc(&m, sizeof(float) * kGemm * kGemm));
    CHECK(cudaMemset(m, 0, sizeof(float) * kGemm * kGemm));
  }
  int gemm_status = run_cublas_sgemm("exact_patterns", gemm[0], gemm[1], gemm[2], kGemm);
  for (float* m : gemm) cudaFree(m);
  return gemm_status == 0 ? 0 : 1;
}
