"""CuPy's memory pool churned: each iteration allocates arrays of varying
sizes, runs elementwise kernels and a reduction on them, and frees them back
to the pool. A checksum every 100 iterations.

    cupy_churn.py ITERATIONS
"""
import sys

import cupy

from marks import mark

iterations = int(sys.argv[1]) if len(sys.argv) > 1 else 200
total = 0.0
for i in range(1, iterations + 1):
    n = 1 << (16 + i % 6)
    a = cupy.arange(n, dtype=cupy.float32)
    b = cupy.sqrt(a) * 0.5 + 1.0
    c = cupy.concatenate([a[: n // 2], b[n // 2:]])
    total += float(c[:1024].sum().get()) if i % 100 == 0 else 0.0
    del a, b, c
    if i % 100 == 0:
        print(f"iteration {i} checksum {total:.1f}", flush=True)
    mark(i)
