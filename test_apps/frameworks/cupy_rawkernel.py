"""CuPy: a RawKernel on arrays from CuPy's memory pool, and a pool round trip."""
import cupy

scale = cupy.RawKernel(r'''
extern "C" __global__ void scale(const float* x, float* y, float a, int n) {
  int i = blockDim.x * blockIdx.x + threadIdx.x;
  if (i < n) y[i] = a * x[i];
}''', "scale")
n = 1 << 20
x = cupy.arange(n, dtype=cupy.float32)
y = cupy.empty_like(x)
scale((n // 256,), (256,), (x, y, cupy.float32(2.0), cupy.int32(n)))
del x
z = cupy.ones(n, dtype=cupy.float32)  # reuses the freed block from the pool
print("sum", int(y.sum().get()), int(z.sum().get()),
      "pool bytes", cupy.get_default_memory_pool().total_bytes() > 0)
