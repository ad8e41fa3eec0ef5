#!/usr/bin/env python3
"""Which module and op ran, recorded from a real PyTorch program (CPU torch):
the Python bootstrap (tracer/frameworks/apptracer-python/sitecustomize.py)
installs its module hooks and asks for torch's RecordFunction callbacks
through the real framework entry points, linked into a probe library that
records without a GPU and hands the ranges back as text. Exits 77 (skipped)
where this Python has no torch.

    python_framework_context_test.py BOOTSTRAP_DIR PROBE_LIBRARY
"""
import collections
import os
import subprocess
import sys
import tempfile
import textwrap

PROGRAM = """
import ctypes
import sys
probe = ctypes.CDLL(sys.argv[1], mode=ctypes.RTLD_GLOBAL)
probe.framework_probe_pending.restype = ctypes.c_size_t
probe.framework_probe_take.argtypes = [ctypes.c_char_p]
probe.framework_probe_start()
import torch


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3, padding=1)
        self.act = torch.nn.ReLU(inplace=True)

    def forward(self, x):
        return self.act(self.conv(x)) + x.mean()


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.features = torch.nn.Sequential(Block(), torch.nn.Flatten())
        self.head = torch.nn.Linear(4 * 8 * 8, 10)

    def forward(self, x):
        return self.head(self.features(x))


torch.manual_seed(0)
model = Net()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
loss_fn = torch.nn.CrossEntropyLoss()
for _ in range(2):
    optimizer.zero_grad()
    loss = loss_fn(model(torch.randn(2, 3, 8, 8)), torch.tensor([1, 2]))
    loss.backward()
    optimizer.step()
text = ctypes.create_string_buffer(probe.framework_probe_pending())
probe.framework_probe_take(text)
sys.stdout.write(text.raw.decode())
"""


def run(bootstrap, probe, work, **env):
    script = os.path.join(work, "program.py")
    with open(script, "w") as f:
        f.write(PROGRAM)
    environment = dict(os.environ, PYTHONPATH=bootstrap, **env)
    for inherited in ("LD_PRELOAD", "APPTRACER_FRAMEWORK_CONTEXT"):
        if inherited not in env:
            environment.pop(inherited, None)
    done = subprocess.run([sys.executable, script, probe], capture_output=True, text=True,
                          env=environment, timeout=600)
    if done.returncode != 0:
        raise RuntimeError(f"the program failed: {done.stderr[-2000:]}")
    ranges = []
    for line in done.stdout.splitlines():
        tid, event, kind, *rest = line.split(" ", 3)
        name, seq = rest[0].split("\t") if rest else ("", "-1")
        ranges.append((int(tid), event, kind, name, int(seq)))
    return ranges


def check(bootstrap, probe, work):
    failures = []

    def expect(condition, what):
        if not condition:
            failures.append(what)

    ranges = run(bootstrap, probe, work, APPTRACER_FRAMEWORK_CONTEXT="on")
    pushes = collections.Counter((kind, name) for _, event, kind, name, _ in ranges if event == "push")
    modules = {name for kind, name in pushes if kind == "module"}
    expect(modules == {"Net", "features", "features.0", "features.0.conv", "features.0.act",
                       "features.1", "head", "CrossEntropyLoss"},
           f"module paths: {sorted(modules)}")
    expect(pushes[("module", "features.0.conv")] == 2, f"one range per call: {pushes}")
    # Each thread's pushes and pops of a kind balance, innermost first.
    depth = collections.Counter()
    for tid, event, kind, _, _ in ranges:
        depth[(tid, kind)] += 1 if event == "push" else -1
        expect(depth[(tid, kind)] >= 0, f"a pop with nothing open on thread {tid} ({kind})")
    expect(all(open_ranges == 0 for open_ranges in depth.values()), f"left open: {depth}")
    ops = {name for kind, name in pushes if kind == "op"}
    expect({"aten::conv2d", "aten::linear", "aten::relu_", "aten::add"} <= ops,
           f"aten ops: {sorted(ops)[:40]}")
    expect(("scope", "Optimizer.step#SGD.step") in pushes, f"the optimizer's scope: "
           f"{sorted(name for kind, name in pushes if kind == 'scope')}")
    # A backward node carries the sequence number of the forward op that made
    # it (AccumulateGrad, made by no op, has none).
    pushed = [(kind, name, seq) for _, event, kind, name, seq in ranges if event == "push"]
    forward_seqs = {seq for kind, _, seq in pushed if kind == "op" and seq >= 0}
    backward = [(name, seq) for kind, name, seq in pushed if kind == "backward" and seq >= 0]
    expect(any(name.startswith("AddmmBackward") for name, _ in backward),
           f"backward nodes: {sorted({name for name, _ in backward})}")
    expect(backward and all(seq in forward_seqs for _, seq in backward),
           f"backward nodes whose seq no forward op had: "
           f"{[(name, seq) for name, seq in backward if seq not in forward_seqs][:5]}")

    modules_only = run(bootstrap, probe, work, APPTRACER_FRAMEWORK_CONTEXT="modules")
    kinds = {kind for _, _, kind, _, _ in modules_only}
    expect(kinds == {"module"}, f"APPTRACER_FRAMEWORK_CONTEXT=modules records {kinds}")
    off = run(bootstrap, probe, work, APPTRACER_FRAMEWORK_CONTEXT="off")
    expect(off == [], f"APPTRACER_FRAMEWORK_CONTEXT=off records {len(off)} ranges")

    for failure in failures:
        print("FAIL", failure)
    print("framework context: ok" if not failures else "framework context: FAILED")
    return 1 if failures else 0


def main():
    try:
        import torch  # noqa: F401
    except ImportError:
        print("SKIPPED: no torch for this Python")
        return 77
    with tempfile.TemporaryDirectory(prefix="apptracer-framework-context-") as work:
        return check(os.path.realpath(sys.argv[1]), os.path.realpath(sys.argv[2]), work)


if __name__ == "__main__":
    sys.exit(main())
