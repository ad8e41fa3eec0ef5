"""JAX: jitted training steps of a small MLP (gradients and an update),
compiled for four batch sizes. XLA compiles and autotunes each, loading and
unloading modules by the hundred, and the driver gives a new function an
unloaded one's handle: launches after an unload must be read with their own
function's parameter layout."""
import jax
import jax.numpy as jnp


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
    return jax.tree_util.tree_map(lambda p, g: p - 1e-2 * g, params, grads)


key = jax.random.PRNGKey(0)
sizes = [256, 512, 512, 10]
params = []
for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
    key, sub = jax.random.split(key)
    params.append((jax.random.normal(sub, (fan_in, fan_out)) / fan_in ** 0.5, jnp.zeros(fan_out)))
for batch in (32, 64, 128, 256):
    inputs = jax.random.normal(jax.random.PRNGKey(batch), (batch, sizes[0]))
    targets = jax.random.randint(jax.random.PRNGKey(batch + 1), (batch,), 0, sizes[-1])
    for _ in range(10):
        params = step(params, inputs, targets)
final = float(loss(params, inputs, targets))
print("devices", [d.platform for d in jax.devices()], "loss finite", bool(jnp.isfinite(final)))
