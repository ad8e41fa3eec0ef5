"""JAX: jitted training steps of a small convolutional network (gradients
and an update), compiled for four batch sizes. XLA compiles and autotunes
each (convolutions most), loading and unloading modules by the hundred,
and the driver gives a new function an unloaded one's handle: launches
after an unload must be read with their own function's parameter layout."""
import jax
import jax.numpy as jnp

CHANNELS = (3, 16, 32)
CLASSES = 10


def init(key):
    convs = []
    for c_in, c_out in zip(CHANNELS[:-1], CHANNELS[1:]):
        key, sub = jax.random.split(key)
        convs.append(jax.random.normal(sub, (c_out, c_in, 3, 3)) / (9 * c_in) ** 0.5)
    head = jax.random.normal(key, (CHANNELS[-1], CLASSES)) / CHANNELS[-1] ** 0.5
    return {"convs": convs, "head": head}


def forward(params, images):
    x = images
    for kernel in params["convs"]:
        x = jax.lax.conv_general_dilated(x, kernel, (2, 2), "SAME")
        x = jax.nn.relu(x)
    return x.mean(axis=(2, 3)) @ params["head"]


def cross_entropy(params, images, labels):
    log_probs = jax.nn.log_softmax(forward(params, images))
    return -jnp.mean(log_probs[jnp.arange(labels.shape[0]), labels])


@jax.jit
def train_step(params, images, labels):
    grads = jax.grad(cross_entropy)(params, images, labels)
    return jax.tree_util.tree_map(lambda p, g: p - 0.05 * g, params, grads)


params = init(jax.random.PRNGKey(0))
for batch in (8, 16, 32, 64):
    images = jax.random.normal(jax.random.PRNGKey(batch), (batch, CHANNELS[0], 32, 32))
    labels = jax.random.randint(jax.random.PRNGKey(batch + 1), (batch,), 0, CLASSES)
    for _ in range(10):
        params = train_step(params, images, labels)
loss = float(cross_entropy(params, images, labels))
print("devices", [d.platform for d in jax.devices()], "loss finite", bool(jnp.isfinite(loss)))
