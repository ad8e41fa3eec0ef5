// Kernels the driver-API app loads as a module (built to a fatbin, not linked).
extern "C" __global__ void vector_add(float* sum, const float* a, const float* b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) sum[i] = a[i] + b[i];
}
