#!/usr/bin/env python3
"""What recording PyTorch's modules and ops costs per call, on the CPU: a
small residual network's training step (tiny tensors, so that the
framework's per-call overhead dominates, as on a launch-bound GPU step),
untraced and with each way of knowing which module and op ran, the
variants interleaved over rounds.

    framework_context_cost.py BOOTSTRAP_DIR PROBE_LIBRARY [ROUNDS] [STEPS]

BOOTSTRAP_DIR is build/tracer/apptracer-python, PROBE_LIBRARY the test
probe (build/tests/libframework_probe.so) that records framework ranges
without a GPU through the tracer's real entry points. Variants:
  none       the step alone (the probe loaded, no bootstrap)
  modules    the bootstrap's module ranges (APPTRACER_FRAMEWORK_CONTEXT=modules)
  on         module ranges and RecordFunction op callbacks, every op
  sampled    module ranges, every op of the first 8192, then 1 in 16
             (APPTRACER_FRAMEWORK_CONTEXT=sampled, the default): torch's own
             sampling skips the callback path on the others
  sampled0   the same, sampled from the first op (APPTRACER_OP_SAMPLE_AFTER=0)
  emit_nvtx  no bootstrap; torch.autograd.profiler.emit_nvtx() around the
             steps (torch's own NVTX ranges per op, which the tracer would
             record as NVTX; here nothing listens, so this is torch's side only)
Prints per variant the median step time, the time of all steps (the 20
warm-up ones included: what ops recorded whole at the start cost once), and
the time of one module call (nn.Identity) and one op (torch.add on
one-element tensors) in a loop, with what each adds to `none`; and the
module calls and op ranges per step.
"""
import os
import statistics
import subprocess
import sys

PROGRAM = r"""
import ctypes, os, statistics, sys, time
probe = ctypes.CDLL(sys.argv[1], mode=ctypes.RTLD_GLOBAL)
probe.framework_probe_pending.restype = ctypes.c_size_t
probe.framework_probe_take.argtypes = [ctypes.c_char_p]
probe.framework_probe_start()
import torch
from torch import nn
torch.set_num_threads(1)


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv1, self.bn1 = nn.Conv2d(c, c, 3, 1, 1, bias=False), nn.BatchNorm2d(c)
        self.relu = nn.ReLU(inplace=True)
        self.conv2, self.bn2 = nn.Conv2d(c, c, 3, 1, 1, bias=False), nn.BatchNorm2d(c)

    def forward(self, x):
        return self.relu(self.bn2(self.conv2(self.relu(self.bn1(self.conv1(x))))) + x)


class Net(nn.Module):
    def __init__(self, c=8):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, c, 3, 1, 1, bias=False), nn.BatchNorm2d(c), nn.ReLU())
        self.layers = nn.Sequential(*[nn.Sequential(Block(c), Block(c)) for _ in range(4)])
        self.head = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(c, 10))

    def forward(self, x):
        return self.head(self.layers(self.stem(x)))


torch.manual_seed(0)
model = Net()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
loss_fn = nn.CrossEntropyLoss()
x, y = torch.randn(2, 3, 8, 8), torch.tensor([1, 2])


def step():
    loss = loss_fn(model(x), y)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()


steps = int(sys.argv[2])


def per_call_ns(call, count=20000):
    # The median over 5 loops of the time per call.
    runs = []
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(count):
            call()
        runs.append((time.perf_counter() - start) * 1e9 / count)
    return statistics.median(runs)


def take():
    text = ctypes.create_string_buffer(probe.framework_probe_pending())
    probe.framework_probe_take(text)
    return text.raw.decode(errors="replace").splitlines()


context = None
if os.environ.get("COST_EMIT_NVTX"):
    context = torch.autograd.profiler.emit_nvtx()
    context.__enter__()
run_start = time.perf_counter()
for _ in range(20):
    step()
take()  # the warm-up's ranges
times = []
for _ in range(steps):
    start = time.perf_counter()
    step()
    times.append((time.perf_counter() - start) * 1e6)
run_ms = (time.perf_counter() - run_start) * 1e3
lines = take()
modules = sum(1 for line in lines if line.split(" ")[1:2] == ["module"])
ops = len(lines) - modules
identity, a, b = nn.Identity(), torch.ones(1), torch.ones(1)
module_ns = per_call_ns(lambda: identity(a))
op_ns = per_call_ns(lambda: torch.add(a, b))
take()
if context is not None:
    context.__exit__(None, None, None)
print(f"{statistics.median(times):.1f} {modules / steps:.1f} {ops / steps:.1f} {module_ns:.1f} {op_ns:.1f} "
      f"{run_ms:.2f}")
"""
VARIANTS = ("none", "modules", "on", "sampled", "sampled0", "emit_nvtx")


def run(variant, bootstrap, probe, steps):
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    env.pop("APPTRACER_FRAMEWORK_CONTEXT", None)
    env.pop("APPTRACER_OP_SAMPLE_AFTER", None)
    if variant in ("modules", "on", "sampled", "sampled0"):
        env["PYTHONPATH"] = bootstrap
        env["APPTRACER_FRAMEWORK_CONTEXT"] = variant.rstrip("0")
    if variant == "sampled0":
        env["APPTRACER_OP_SAMPLE_AFTER"] = "0"
    if variant == "emit_nvtx":
        env["COST_EMIT_NVTX"] = "1"
    done = subprocess.run([sys.executable, "-c", PROGRAM, probe, str(steps)], capture_output=True,
                          text=True, env=env)
    if done.returncode != 0:
        sys.stderr.write(f"{variant} failed: {done.stderr.strip().splitlines()[-1:]}\n")
        return None
    return tuple(float(v) for v in done.stdout.split()[-6:])


def main():
    bootstrap, probe = os.path.realpath(sys.argv[1]), os.path.realpath(sys.argv[2])
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    steps = int(sys.argv[4]) if len(sys.argv) > 4 else 200
    results = {variant: [] for variant in VARIANTS}
    for _ in range(rounds):
        for variant in VARIANTS:
            results[variant].append(run(variant, bootstrap, probe, steps))

    def median(variant, column):
        values = [r[column] for r in results[variant] if r]
        return statistics.median(values) if values else None

    base_step, base_module, base_op, base_run = (median("none", c) for c in (0, 3, 4, 5))
    print(f"per step ({steps} steps, {rounds} rounds): {median('on', 1):.0f} module calls, "
          f"{median('on', 2):.0f} op and backward-node ranges")
    print(f"variant    step (us)   vs none   all {steps + 20} steps (ms)  module call (ns)  op call (ns)")
    for variant in VARIANTS:
        if median(variant, 0) is None:
            print(f"{variant:<10} failed")
            continue
        step, module, op, whole = (median(variant, c) for c in (0, 3, 4, 5))
        print(f"{variant:<10} {step:9.1f}  {step / base_step:7.3f}x  {whole:9.1f} ({whole - base_run:+7.1f})"
              f"  {module:8.0f} ({module - base_module:+5.0f})  {op:6.0f} ({op - base_op:+5.0f})")


if __name__ == "__main__":
    main()
