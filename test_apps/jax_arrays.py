#!/usr/bin/env python3
"""JAX arrays on the GPU, recorded with `apptracer record
--framework-allocators=per-buffer` (XLA's platform allocator: one CUDA
allocation per buffer): the GPU check that each array is its own value.

Prints (lines starting "jax_arrays: ") each array's address. Exits 77 where
JAX or a GPU is missing.
"""
import json
import sys

try:
    import jax
    import jax.numpy as jnp
    import numpy as np
except ImportError:
    print("no JAX here")
    sys.exit(77)

N = 1 << 20


def main():
    try:
        if not jax.devices("gpu"):
            raise RuntimeError
    except Exception:
        print("no CUDA GPU for JAX")
        return 77
    x = jnp.arange(N, dtype=jnp.float32)
    y = jax.jit(lambda v: v * 2 + 1)(x)
    z = jax.jit(jnp.sin)(y)
    z.block_until_ready()
    addresses = {name: array.unsafe_buffer_pointer() for name, array in (("x", x), ("y", y), ("z", z))}
    host = np.asarray(z)  # z's device-to-host copy
    print("jax_arrays: " + json.dumps(addresses))
    print(f"jax_arrays: sum {float(host.sum()):.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
