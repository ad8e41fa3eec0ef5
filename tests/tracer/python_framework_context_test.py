#!/usr/bin/env python3
"""Which module and op ran, recorded from a real PyTorch program (CPU torch):
the Python bootstrap (tracer/frameworks/apptracer-python/sitecustomize.py)
installs its module hooks and asks for torch's RecordFunction callbacks
through the real framework entry points, linked into a probe library that
records without a GPU and hands the ranges back as text. The probe's
"work" stands for a launch inside Block's forward: by default only ranges
around recorded work (or forward ops that made an autograd node) are kept.
Exits 77 (skipped) where this Python has no torch.

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
        probe.framework_probe_work()
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
    for inherited in ("LD_PRELOAD", "APPTRACER_FRAMEWORK_CONTEXT", "APPTRACER_OP_SAMPLE_EVERY",
                      "APPTRACER_OP_SAMPLE_AFTER"):
        if inherited not in env:
            environment.pop(inherited, None)
    done = subprocess.run([sys.executable, script, probe], capture_output=True, text=True,
                          env=environment, timeout=600)
    if done.returncode != 0:
        raise RuntimeError(f"the program failed: {done.stderr[-2000:]}")
    Range = collections.namedtuple("Range", "tid kind start end depth seq name")
    ranges = []
    for line in done.stdout.splitlines():
        tid, kind, start, end, depth, seq, name = line.split(" ", 6)
        ranges.append(Range(int(tid), kind, int(start), int(end), int(depth), int(seq), name))
    return ranges


def check(bootstrap, probe, work):
    failures = []

    def expect(condition, what):
        if not condition:
            failures.append(what)

    ranges = run(bootstrap, probe, work, APPTRACER_FRAMEWORK_CONTEXT="all")
    names = collections.Counter((r.kind, r.name) for r in ranges)
    modules = {name for kind, name in names if kind == "module"}
    expect(modules == {"Net", "features", "features.0", "features.0.conv", "features.0.act",
                       "features.1", "head", "CrossEntropyLoss"},
           f"module paths: {sorted(modules)}")
    expect(names[("module", "features.0.conv")] == 2, f"one range per call: {names}")
    # Ranges of a kind on a thread nest: each inside those of lower depth.
    for r in ranges:
        outer = [o for o in ranges if o.tid == r.tid and o.kind == r.kind and o.depth < r.depth]
        expect(r.start <= r.end and all(o.start <= r.start and r.end <= o.end for o in outer
                                        if o.start <= r.start <= o.end),
               f"a range outside its enclosing ones: {r}")
    ops = {name for kind, name in names if kind == "op"}
    expect({"aten::conv2d", "aten::linear", "aten::relu_", "aten::add"} <= ops,
           f"aten ops: {sorted(ops)[:40]}")
    expect(("scope", "Optimizer.step#SGD.step") in names, f"the optimizer's scope: "
           f"{sorted(name for kind, name in names if kind == 'scope')}")
    # A backward node carries the sequence number of the forward op that made
    # it (AccumulateGrad, made by no op, has none).
    forward_seqs = {r.seq for r in ranges if r.kind == "op" and r.seq >= 0}
    backward = [(r.name, r.seq) for r in ranges if r.kind == "backward" and r.seq >= 0]
    expect(any(name.startswith("AddmmBackward") for name, _ in backward),
           f"backward nodes: {sorted({name for name, _ in backward})}")
    expect(backward and all(seq in forward_seqs for _, seq in backward),
           f"backward nodes whose seq no forward op had: "
           f"{[(name, seq) for name, seq in backward if seq not in forward_seqs][:5]}")

    # By default a range is kept for work inside it, for a forward op's
    # autograd node, or for a kept range inside it (on CPU the probe's work is
    # the only work).
    kept = run(bootstrap, probe, work, APPTRACER_FRAMEWORK_CONTEXT="on")
    expect(0 < len(kept) < len(ranges), f"{len(kept)} of {len(ranges)} ranges kept")
    works = [r for r in kept if r.kind == "module" and r.name == "features.0"]
    for r in kept:
        inner = any(o.tid == r.tid and o is not r and r.start <= o.start and o.end <= r.end
                    for o in kept)
        around_work = any(r.tid == w.tid and r.start <= w.start and w.end <= r.end for w in works)
        expect((r.kind == "op" and r.seq >= 0) or inner or around_work,
               f"a range kept for nothing: {r}")
    expect(not any(r.name == "Optimizer.step#SGD.step" for r in kept),
           "the optimizer's step (no autograd, no work on CPU) is not kept")
    expect({"aten::conv2d", "aten::addmm"} <= {r.name for r in kept},
           "forward ops that made autograd nodes are kept")

    # Sampled: torch runs the op and backward callbacks for 1 in 4 calls (its
    # own countdown, randomly seeded); modules and named scopes are all kept.
    sampled = run(bootstrap, probe, work, APPTRACER_FRAMEWORK_CONTEXT="sampled",
                  APPTRACER_OP_SAMPLE_EVERY="4", APPTRACER_OP_SAMPLE_AFTER="0")
    kept_ops = [r for r in kept if r.kind in ("op", "backward")]
    sampled_ops = [r for r in sampled if r.kind in ("op", "backward")]
    expect(0 < len(sampled_ops) < len(kept_ops) / 2,
           f"1 in 4 ops sampled: {len(sampled_ops)} op and backward ranges kept, {len(kept_ops)} unsampled")
    expect({r.name for r in sampled if r.kind == "module"} >= {"Net", "features", "features.0"},
           "sampling leaves the module ranges whole")
    # Sampling begins after the first APPTRACER_OP_SAMPLE_AFTER ops and nodes,
    # each recorded: with half this program's calls whole and 1 in a million
    # after, what is kept is the start of what every op keeps.
    calls = sum(1 for r in ranges if r.kind in ("op", "backward"))
    in_order = lambda found: [(r.kind, r.name, r.seq) for r in sorted(found, key=lambda r: r.start)
                              if r.kind in ("op", "backward")]
    half = run(bootstrap, probe, work, APPTRACER_FRAMEWORK_CONTEXT="sampled",
               APPTRACER_OP_SAMPLE_EVERY="1000000", APPTRACER_OP_SAMPLE_AFTER=str(calls // 2))
    whole, first = in_order(kept), in_order(half)
    expect(len(whole) // 4 <= len(first) < len(whole) and first == whole[:len(first)],
           f"the first {calls // 2} of {calls} calls whole, then sampled: {len(first)} op ranges "
           f"kept of {len(whole)}, the start of every op's: {first == whole[:len(first)]}")
    # Sampled is the tracer's default: the bootstrap asks it, keeps none of its
    # own; this program's few hundred calls are all among the first 8192.
    default = run(bootstrap, probe, work, APPTRACER_OP_SAMPLE_EVERY="4")
    expect(in_order(default) == whole and
           {r.name for r in default if r.kind == "module"} >= {"Net", "features", "features.0"},
           f"unset, the context is sampled after 8192 ops: {len(in_order(default))} op and "
           f"backward ranges of {len(whole)}, modules "
           f"{sorted({r.name for r in default if r.kind == 'module'})}")

    modules_only = run(bootstrap, probe, work, APPTRACER_FRAMEWORK_CONTEXT="modules")
    expect({(r.kind, r.name) for r in modules_only} ==
           {("module", "Net"), ("module", "features"), ("module", "features.0")},
           f"APPTRACER_FRAMEWORK_CONTEXT=modules keeps the modules around the work: "
           f"{sorted({(r.kind, r.name) for r in modules_only})}")
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
