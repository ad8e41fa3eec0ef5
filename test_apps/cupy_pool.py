#!/usr/bin/env python3
"""CuPy arrays from its memory pool, one freed and its block reused, one
allocated in another thread: the GPU check of the CuPy memory hook.

Prints (lines starting "cupy_pool: ") each array's address. Exits 77 where
CuPy or a GPU is missing.
"""
import json
import sys
import threading

try:
    import cupy
except ImportError:
    print("no CuPy here")
    sys.exit(77)

N = 1 << 20


def main():
    try:
        if cupy.cuda.runtime.getDeviceCount() == 0:
            raise RuntimeError
    except Exception:
        print("no CUDA GPU for CuPy")
        return 77
    a = cupy.arange(N, dtype=cupy.float32)
    b = a * 2
    addresses = {"a": a.data.ptr, "b": b.data.ptr}
    del a  # back in the pool: c reuses its block
    c = cupy.ones(N, dtype=cupy.float32)
    addresses["c"] = c.data.ptr
    in_thread = {}

    def allocate():
        d = cupy.zeros(1000, dtype=cupy.float32)
        in_thread["d"] = d.data.ptr
        cupy.cuda.Stream.null.synchronize()

    worker = threading.Thread(target=allocate)
    worker.start()
    worker.join()
    addresses.update(in_thread)
    total = float(cupy.asnumpy(b + c).sum())
    print("cupy_pool: " + json.dumps(addresses))
    print(f"cupy_pool: sum {total:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
