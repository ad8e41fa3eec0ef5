// The work of the what-if pipelines' kernels: per element, y = y / 2 + x
// repeated `work` times, so that a kernel takes about as long as a copy.
// Included by one source file per program (each test app is one).
#pragma once

#include <cstddef>

__global__ void relax(const float* in, float* out, size_t count, int work) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < count; i += size_t(gridDim.x) * blockDim.x) {
    float x = in[i];
    float y = 0.0f;
    for (int k = 0; k < work; ++k) y = y * 0.5f + x;
    out[i] = y;
  }
}

// What relax makes of x: the programs check their output against it.
inline float relaxed(float x, int work) {
  float y = 0.0f;
  for (int k = 0; k < work; ++k) y = y * 0.5f + x;
  return y;
}

inline float relaxed_one(int work) { return relaxed(1.0f, work); }
