// Test apps stop with a clear message on the first CUDA error they did not expect.
#pragma once

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#define CHECK(call)                                                                  \
  do {                                                                               \
    cudaError_t check_error = (call);                                                \
    if (check_error != cudaSuccess) {                                                \
      std::fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call,      \
                   cudaGetErrorString(check_error));                                 \
      std::exit(1);                                                                  \
    }                                                                                \
  } while (0)
