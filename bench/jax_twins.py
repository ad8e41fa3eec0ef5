"""JAX programs with a problem and their fixed twins, for diagnose_truth.py
--frameworks, with framework_twins.py's command line and output: each runs
STEPS training steps after WARMUP, and prints "work_ms X" (the measured
steps' wall time), "steps N" and "peak_bytes B" (the device's
peak_bytes_in_use, 0 where it has no memory statistics) on stderr. It never
imports torch: a second CUDA context beside XLA's would distort the timing.

    python3 jax_twins.py SCENARIO bad|fixed [--time] [STEPS] [WARMUP]

Scenarios (the rule whose saving the bad one prices, and the whatif change
that predicts the fixed one from the bad one's trace):
  jax_split  a small flax MLP's training step (batch 128, 512 -> seven
             512-wide layers -> 10, Adam), its work split over separately
             jitted functions that the loop calls one after another: the
             loss and gradients, then the update of each parameter (16
             calls), then the metrics, 18 executables dispatched a step;
             vs the same functions jitted together as one step, the fix
             diagnose advises for JAX ("jit more of the step into one
             function") (launch_bound_kernels; whatif --graphs). On an
             H200 both are host-bound: 1.70 and 0.68 ms a step untraced
             for 0.19 ms of GPU work: the host's step around its one
             jitted call (66 arguments, 66 results) still outlasts the
             GPU's (bench/RESULTS.md)
  jax_shapes a small convolutional network's jitted training step fed
             batches of four sizes in turn (64, 48, 32, 16; a quarter of
             the steps each), so that XLA compiles and autotunes the step
             again at each new size; vs every batch padded to 64 with its
             padding's examples weighted 0 in the loss, one compile in all,
             the fix diagnose advises for JAX ("fixed shapes")
             (xla_compile, priced over the run; no whatif). The timed
             steps hold the three compiles after the first, which the
             warm-up step holds in both

Each step is an NVTX range "step" where the nvtx package is installed;
without it apptracer finds the steps from their repeating launches.
"""
import sys
import time

import flax.linen as nn
import jax
import jax.numpy as jnp
import optax

try:
    import nvtx
    push_range, pop_range = nvtx.push_range, nvtx.pop_range
except ImportError:
    def push_range(_name):
        pass

    def pop_range():
        pass

SCENARIOS = ("jax_split", "jax_shapes")
BATCH, FEATURES, WIDTH, LAYERS, CLASSES = 128, 512, 512, 8, 10
OPTIMIZER = optax.adam(1e-3)


class Mlp(nn.Module):
    @nn.compact
    def __call__(self, x):
        for _ in range(LAYERS - 1):
            x = nn.relu(nn.Dense(WIDTH)(x))
        return nn.Dense(CLASSES)(x)


def training_step(gradients, update, metrics):
    """One training step over a state of (parameters, their optimizer states,
    metrics), built from the three functions, each jitted alone or not."""

    def step(state, inputs, targets):
        params, opt_states, tracked = state
        loss, grads = gradients(params, inputs, targets)
        updated = [update(p, g, s) for p, g, s in zip(params, grads, opt_states)]
        return [p for p, _ in updated], [s for _, s in updated], metrics(tracked, loss, grads)
    return step


def make_step(variant):
    """The step function and its first state (the same for both variants)."""
    init_key, input_key, target_key = jax.random.split(jax.random.PRNGKey(0), 3)
    model = Mlp()
    inputs = jax.random.normal(input_key, (BATCH, FEATURES))
    targets = jax.random.randint(target_key, (BATCH,), 0, CLASSES)
    # The parameters as a flat list, so that each one's update is a call of its own in the bad twin.
    params, tree = jax.tree.flatten(model.init(init_key, inputs)["params"])

    def gradients(params, inputs, targets):
        def loss(params):
            logits = model.apply({"params": jax.tree.unflatten(tree, params)}, inputs)
            return optax.softmax_cross_entropy_with_integer_labels(logits, targets).mean()
        return jax.value_and_grad(loss)(params)

    def update(param, grad, opt_state):
        updates, opt_state = OPTIMIZER.update(grad, opt_state, param)
        return optax.apply_updates(param, updates), opt_state

    def metrics(tracked, loss, grads):
        return {"loss_sum": tracked["loss_sum"] + loss, "grad_norm": optax.global_norm(grads)}

    if variant == "fixed":
        step = jax.jit(training_step(gradients, update, metrics))
    else:
        step = training_step(jax.jit(gradients), jax.jit(update), jax.jit(metrics))
    state = (params, [OPTIMIZER.init(p) for p in params],
             {"loss_sum": jnp.zeros(()), "grad_norm": jnp.zeros(())})
    return (lambda state: step(state, inputs, targets)), state


SHAPE_BATCHES, IMAGE, CHANNELS = (64, 48, 32, 16), 32, (3, 16, 32)


def conv_net_step(variant):
    """jax_shapes' step function, taking the step's number, and its first state."""
    keys = jax.random.split(jax.random.PRNGKey(1), 8)
    convs = [jax.random.normal(keys[i], (c_out, c_in, 3, 3)) / (9 * c_in) ** 0.5
             for i, (c_in, c_out) in enumerate(zip(CHANNELS[:-1], CHANNELS[1:]))]
    params = {"convs": convs, "head": jax.random.normal(keys[7], (CHANNELS[-1], CLASSES)) / CHANNELS[-1] ** 0.5}

    def loss(params, images, labels, weights):
        x = images
        for kernel in params["convs"]:
            x = jax.nn.relu(jax.lax.conv_general_dilated(x, kernel, (2, 2), "SAME"))
        logits = x.mean(axis=(2, 3)) @ params["head"]
        losses = optax.softmax_cross_entropy_with_integer_labels(logits, labels)
        return (losses * weights).sum() / weights.sum()

    @jax.jit
    def train_step(params, images, labels, weights):
        grads = jax.grad(loss)(params, images, labels, weights)
        return jax.tree.map(lambda p, g: p - 0.05 * g, params, grads)

    # The batches are made before the steps, so that neither variant compiles
    # their making inside a step; a padded batch's examples past its own are zeros, weighted 0.
    size = max(SHAPE_BATCHES)
    batches = []
    for index, batch in enumerate(SHAPE_BATCHES):
        images = jax.random.normal(jax.random.PRNGKey(10 + index), (batch, CHANNELS[0], IMAGE, IMAGE))
        labels = jax.random.randint(jax.random.PRNGKey(20 + index), (batch,), 0, CLASSES)
        weights = jnp.ones((batch,))
        if variant == "fixed":
            pad = size - batch
            images = jnp.pad(images, ((0, pad), (0, 0), (0, 0), (0, 0)))
            labels, weights = jnp.pad(labels, (0, pad)), jnp.pad(weights, (0, pad))
        batches.append((images, labels, weights))
    jax.block_until_ready(batches)
    return batches, train_step, params


def make_shapes_step(variant, steps):
    """jax_shapes: a quarter of the timed steps on each batch size in turn;
    the warm-up steps on the first."""
    batches, train_step, params = conv_net_step(variant)
    per_size = max(1, steps // len(batches))

    def run(state, index):
        batch = batches[min(index // per_size, len(batches) - 1)] if index >= 0 else batches[0]
        return train_step(state, *batch)
    return run, params


def main():
    args = [a for a in sys.argv[1:] if a != "--time"]
    if len(args) < 2 or args[0] not in SCENARIOS or args[1] not in ("bad", "fixed"):
        sys.exit(f"usage: {sys.argv[0]} {{{'|'.join(SCENARIOS)}}} bad|fixed [--time] [STEPS] [WARMUP]")
    variant = args[1]
    # More steps than framework_twins.py's 50: a step here is under a millisecond.
    # jax_shapes: one warm-up step (the first compile, in both variants) and 40 timed steps.
    shapes = args[0] == "jax_shapes"
    steps = int(args[2]) if len(args) > 2 else 40 if shapes else 200
    warmup = int(args[3]) if len(args) > 3 else 1 if shapes else 20
    if shapes:
        run, state = make_shapes_step(variant, steps)
    else:
        step, state = make_step(variant)
        run = lambda state, _index: step(state)  # noqa: E731
    for _ in range(warmup):
        push_range("step")
        state = run(state, -1)
        pop_range()
    jax.block_until_ready(state)
    # No wait inside the timed steps: one would hide the host's dispatching, the cost the fix removes.
    start = time.perf_counter()
    for index in range(steps):
        push_range("step")
        state = run(state, index)
        pop_range()
    jax.block_until_ready(state)
    elapsed = time.perf_counter() - start
    stats = jax.devices()[0].memory_stats() or {}
    print(f"work_ms {elapsed * 1e3:.3f}", file=sys.stderr)
    print(f"steps {steps}", file=sys.stderr)
    print(f"peak_bytes {stats.get('peak_bytes_in_use', 0)}", file=sys.stderr)


if __name__ == "__main__":
    main()
