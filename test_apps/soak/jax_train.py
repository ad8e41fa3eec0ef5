"""JAX: a jitted MLP training step (value_and_grad, SGD), its buffers from
XLA's allocator. The loss every 100 steps.

    jax_train.py STEPS
"""
import sys

import jax
import jax.numpy as jnp

from marks import mark


def loss_fn(params, x, y):
    hidden = jnp.tanh(x @ params["w1"])
    return jnp.mean((hidden @ params["w2"] - y) ** 2)


@jax.jit
def step(params, x, y):
    loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
    return jax.tree_util.tree_map(lambda p, g: p - 0.01 * g, params, grads), loss


def main():
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    k1, k2, k3 = jax.random.split(jax.random.PRNGKey(0), 3)
    params = {"w1": jax.random.normal(k1, (512, 1024)) * 0.03,
              "w2": jax.random.normal(k2, (1024, 64)) * 0.03}
    x = jax.random.normal(k3, (256, 512))
    y = jnp.zeros((256, 64))
    for i in range(1, steps + 1):
        params, loss = step(params, x, y)
        if i % 100 == 0:
            print(f"step {i} loss {float(loss):.5f}", flush=True)
        mark(i)


if __name__ == "__main__":
    main()
