// Pearson's thesis, Fig. 6.1: three host buffers, three device buffers, two
// H2D copies, one kernel, one D2H copy. Its trace is the DVDG golden example.
#include <vector>

#include "check.h"

__global__ void vector_add(float* sum, const float* a, const float* b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) sum[i] = a[i] + b[i];
}

int main() {
  const int n = 1 << 20;
  const size_t bytes = n * sizeof(float);
  std::vector<float> a_h(n), b_h(n), s_h(n);
  for (int i = 0; i < n; ++i) {
    a_h[i] = static_cast<float>(i);
    b_h[i] = static_cast<float>(2 * i);
  }
  float *a_d, *b_d, *s_d;
  CHECK(cudaMalloc(&a_d, bytes));
  CHECK(cudaMalloc(&b_d, bytes));
  CHECK(cudaMalloc(&s_d, bytes));
  CHECK(cudaMemcpy(a_d, a_h.data(), bytes, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(b_d, b_h.data(), bytes, cudaMemcpyHostToDevice));
  vector_add<<<(n + 255) / 256, 256>>>(s_d, a_d, b_d, n);
  CHECK(cudaGetLastError());
  CHECK(cudaMemcpy(s_h.data(), s_d, bytes, cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i) {
    if (s_h[i] != 3.0f * i) {
      std::fprintf(stderr, "vector_add: wrong sum at %d\n", i);
      return 1;
    }
  }
  CHECK(cudaFree(a_d));
  CHECK(cudaFree(b_d));
  CHECK(cudaFree(s_d));
  std::printf("vector_add: %d elements correct\n", n);
  return 0;
}
