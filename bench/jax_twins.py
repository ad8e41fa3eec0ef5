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

SCENARIOS = ("jax_split",)
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


def main():
    args = [a for a in sys.argv[1:] if a != "--time"]
    if len(args) < 2 or args[0] not in SCENARIOS or args[1] not in ("bad", "fixed"):
        sys.exit(f"usage: {sys.argv[0]} {{{'|'.join(SCENARIOS)}}} bad|fixed [--time] [STEPS] [WARMUP]")
    variant = args[1]
    # More steps than framework_twins.py's 50: a step here is under a millisecond.
    steps = int(args[2]) if len(args) > 2 else 200
    warmup = int(args[3]) if len(args) > 3 else 20
    run, state = make_step(variant)
    for _ in range(warmup):
        push_range("step")
        state = run(state)
        pop_range()
    jax.block_until_ready(state)
    # No wait inside the timed steps: one would hide the host's dispatching, the cost the fix removes.
    start = time.perf_counter()
    for _ in range(steps):
        push_range("step")
        state = run(state)
        pop_range()
    jax.block_until_ready(state)
    elapsed = time.perf_counter() - start
    stats = jax.devices()[0].memory_stats() or {}
    print(f"work_ms {elapsed * 1e3:.3f}", file=sys.stderr)
    print(f"steps {steps}", file=sys.stderr)
    print(f"peak_bytes {stats.get('peak_bytes_in_use', 0)}", file=sys.stderr)


if __name__ == "__main__":
    main()
