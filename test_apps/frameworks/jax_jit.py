"""JAX: a jit-compiled matmul + tanh step, 20 iterations."""
import jax
import jax.numpy as jnp


@jax.jit
def step(x, w):
    return jnp.tanh(x @ w)


key = jax.random.PRNGKey(0)
x = jax.random.normal(key, (512, 512))
w = jax.random.normal(jax.random.PRNGKey(1), (512, 512)) * 0.05
for _ in range(20):
    x = step(x, w)
x.block_until_ready()
print("devices", [d.platform for d in jax.devices()], "finite", bool(jnp.isfinite(x).all()))
