"""flax: a small CNN (linen) trained with optax's Adam, one jitted step a
batch of one shape, 40 steps, parameters and optimizer state donated."""
import jax
import jax.numpy as jnp
import optax
from flax import linen as nn

STEPS = 40


class CNN(nn.Module):
    @nn.compact
    def __call__(self, x):
        for features in (32, 64):
            x = nn.relu(nn.Conv(features, (3, 3), strides=(2, 2))(x))
        x = x.mean(axis=(1, 2))
        return nn.Dense(10)(nn.relu(nn.Dense(128)(x)))


model = CNN()
images = jax.random.normal(jax.random.PRNGKey(1), (64, 32, 32, 3))
labels = jax.random.randint(jax.random.PRNGKey(2), (64,), 0, 10)
params = model.init(jax.random.PRNGKey(0), images)
optimizer = optax.adam(1e-3)
state = optimizer.init(params)


def loss_of(params):
    return optax.softmax_cross_entropy_with_integer_labels(model.apply(params, images), labels).mean()


def train_step(params, state):
    loss, grads = jax.value_and_grad(loss_of)(params)
    updates, state = optimizer.update(grads, state)
    return optax.apply_updates(params, updates), state, loss


train_step = jax.jit(train_step, donate_argnums=(0, 1))
losses = []
for _ in range(STEPS):
    params, state, loss = train_step(params, state)
    losses.append(loss)
print("steps", STEPS, "loss decreased", bool(losses[-1] < losses[0]))
