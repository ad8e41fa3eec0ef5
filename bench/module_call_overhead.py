#!/usr/bin/env python3
"""What the Python bootstrap's module wrapper adds to one nn.Module call,
without torch: a stand-in torch.nn.Module and a stand-in for
libapptracer.so's framework entry points (each a Python no-op), so that what
is timed is the bootstrap's own Python (the wrapper, naming, the caller
scopes), not torch's or the tracer's. A 50-module model called from a
function in a loop, the variants interleaved over rounds.

    module_call_overhead.py BOOTSTRAP_DIR [ROUNDS]

Variants:
  scopes     the wrapper as installed (the function calling the outermost
             module a scope, on Python 3.12 and later)
  no-scopes  the wrapper without caller scopes (as on Python 3.11)
Prints per variant each round's ns per module call and the minimum.
"""
import os
import subprocess
import sys
import tempfile
import textwrap

STAND_IN_TORCH = {
    "torch/__init__.py": """
        __version__ = "2.11.0+cu130"
        from torch import cuda, nn
    """,
    "torch/cuda/__init__.py": """
        def _lazy_call(callable):
            pass
    """,
    "torch/nn/__init__.py": """
        class Module:
            def __call__(self, *args):
                return self.forward(*args)
            def forward(self, x):
                return x
            def named_modules(self):
                yield "", self
                for index, child in enumerate(getattr(self, "children", [])):
                    yield f"children.{index}", child
    """,
}

PROGRAM = """
import sys, time
import sitecustomize as boot
class Library:
    def apptracer_framework_context(self): return b"modules"
    def apptracer_framework_name(self, name): return 1
    def apptracer_framework_push(self, kind, name_id): return 0
    def apptracer_framework_pop(self, kind): return 0
boot._library = Library()
if sys.argv[1] == "no-scopes":
    boot._caller_scopes = lambda library, code: None
import torch
class Net(torch.nn.Module):
    def __init__(self):
        self.children = [torch.nn.Module() for _ in range(50)]
    def forward(self, x):
        for child in self.children:
            x = child(x)
        return x
net = Net()
def step(x):
    return net(x)
steps, best = 20000, float("inf")
for _ in range(3):
    start = time.perf_counter()
    for i in range(steps):
        step(i)
    best = min(best, (time.perf_counter() - start) / (51 * steps))
print(f"{best * 1e9:.0f}")
"""


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: module_call_overhead.py BOOTSTRAP_DIR [ROUNDS]")
    bootstrap, rounds = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 5
    variants = ["no-scopes", "scopes"]
    results = {variant: [] for variant in variants}
    with tempfile.TemporaryDirectory(prefix="apptracer-module-call-") as work:
        for name, text in STAND_IN_TORCH.items():
            path = os.path.join(work, name)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write(textwrap.dedent(text))
        environment = dict(os.environ, PYTHONPATH=os.pathsep.join([bootstrap, work]))
        for key in ("LD_PRELOAD", "APPTRACER_FRAMEWORK_CONTEXT"):
            environment.pop(key, None)
        for _ in range(rounds):
            for variant in variants:
                done = subprocess.run([sys.executable, "-c", PROGRAM, variant], capture_output=True, text=True,
                                      env=environment, timeout=300, check=True)
                results[variant].append(int(done.stdout.split()[-1]))
    print(f"Python {sys.version.split()[0]}: ns per module call, {rounds} interleaved rounds")
    for variant in variants:
        print(f"  {variant:10} {' '.join(map(str, results[variant]))}  -> min {min(results[variant])}")


if __name__ == "__main__":
    main()
