"""A JAX program for the benchmark: jitted training steps of a small MLP on
the GPU, to measure what `apptracer record --framework-allocators=per-buffer`
costs (XLA_PYTHON_CLIENT_ALLOCATOR=platform: each buffer a cuMemAlloc and
cuMemFree instead of a block of XLA's BFC pool). Prints the median step time
in microseconds on its last line, for compare.sh.

    python3 jax_steps.py [STEPS] [WARMUP]
"""
import statistics
import sys
import time

import jax
import jax.numpy as jnp


def init(key, sizes):
    params = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        key, sub = jax.random.split(key)
        params.append((jax.random.normal(sub, (fan_in, fan_out)) / fan_in ** 0.5, jnp.zeros(fan_out)))
    return params


def loss(params, inputs, targets):
    x = inputs
    for weight, bias in params[:-1]:
        x = jax.nn.relu(x @ weight + bias)
    weight, bias = params[-1]
    logits = x @ weight + bias
    return -jnp.mean(jnp.take_along_axis(jax.nn.log_softmax(logits), targets[:, None], axis=1))


@jax.jit
def step(params, inputs, targets):
    grads = jax.grad(loss)(params, inputs, targets)
    return jax.tree_util.tree_map(lambda p, g: p - 1e-3 * g, params, grads)


def main():
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    warmup = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    key = jax.random.PRNGKey(0)
    params = init(key, [512, 1024, 1024, 1024, 10])
    inputs = jax.random.normal(key, (64, 512))
    targets = jax.random.randint(key, (64,), 0, 10)
    times = []
    for i in range(warmup + steps):
        start = time.perf_counter()
        params = step(params, inputs, targets)
        jax.block_until_ready(params)  # a step ends when its GPU work does
        if i >= warmup:
            times.append(time.perf_counter() - start)
    print(f"{statistics.median(times) * 1e6:.1f}")


if __name__ == "__main__":
    main()
