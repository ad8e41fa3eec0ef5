// C = A * B (n x n, column-major, beta 0) through cuBLAS, loaded at run time
// so the apps build where the toolkit has no cuBLAS: its kernels are ones no
// test app compiles (pointers inside a Params struct, cuBLAS's own modules).
// Prints "APP: no cuBLAS here, SGEMM skipped" and returns 0 without it.
#pragma once

#include <dlfcn.h>

#include "check.h"

inline int run_cublas_sgemm(const char* app, const float* a, const float* b, float* c, int n) {
  void* cublas = dlopen("libcublas.so.13", RTLD_NOW);
  if (!cublas) {
    std::printf("%s: no cuBLAS here, SGEMM skipped\n", app);
    return 0;
  }
  using Create = int (*)(void**);
  using Destroy = int (*)(void*);
  using Sgemm = int (*)(void*, int, int, int, int, int, const float*, const float*, int,
                        const float*, int, const float*, float*, int);
  auto create = reinterpret_cast<Create>(dlsym(cublas, "cublasCreate_v2"));
  auto destroy = reinterpret_cast<Destroy>(dlsym(cublas, "cublasDestroy_v2"));
  auto sgemm = reinterpret_cast<Sgemm>(dlsym(cublas, "cublasSgemm_v2"));
  void* handle = nullptr;
  if (!create || !destroy || !sgemm || create(&handle) != 0) return 1;
  const float one = 1.0f, zero = 0.0f;
  int status = sgemm(handle, 0, 0, n, n, n, &one, a, n, b, n, &zero, c, n);
  CHECK(cudaDeviceSynchronize());
  destroy(handle);
  std::printf("%s: cuBLAS SGEMM status %d\n", app, status);
  return status;
}
