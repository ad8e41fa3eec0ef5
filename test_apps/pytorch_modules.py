#!/usr/bin/env python3
"""A ResNet-like PyTorch training run, and the check that its trace says
which module and op issued each launch.

    pytorch_modules.py run [STEPS]             # the program (run under apptracer record)
    pytorch_modules.py check TRACE APPTRACER   # exits 1 if an assertion fails

The program trains a small residual network (bf16 autocast, SGD with
momentum, a per-step loss.item()) for a few steps (STEPS, 6 unless given:
a trace that samples its ops, as apptracer record does by default, wants
enough steps for each launch's op to be recorded in one). The check reads
`apptracer stats --report modules` and `--report ops`: at least 95% of the
kernel launches have a module (forward, backward, or the optimizer's
scope) and an op, the residual blocks' convolutions appear forward and
backward by their dotted paths, the tracer says its op callbacks
attached, pieces live at the memory peak name the module and op that
made them (`stats --report memory`), `diagnose` says no memory was
never used (all of it is), and a run of 20 iterations or more has as many
steps found from its launches. Exits 77 where torch or a GPU is missing.
"""
import csv
import io
import json
import sqlite3
import subprocess
import sys

STEPS = 6


def run(steps):
    import torch
    from torch import nn

    class Block(nn.Module):
        def __init__(self, channels_in, channels, stride):
            super().__init__()
            self.conv1 = nn.Conv2d(channels_in, channels, 3, stride, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(channels)
            self.relu = nn.ReLU(inplace=True)
            self.conv2 = nn.Conv2d(channels, channels, 3, 1, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(channels)
            self.downsample = None
            if stride != 1 or channels_in != channels:
                self.downsample = nn.Sequential(nn.Conv2d(channels_in, channels, 1, stride, bias=False),
                                                nn.BatchNorm2d(channels))

        def forward(self, x):
            identity = x if self.downsample is None else self.downsample(x)
            out = self.relu(self.bn1(self.conv1(x)))
            out = self.bn2(self.conv2(out))
            return self.relu(out + identity)

    class ResNetLike(nn.Module):
        def __init__(self, classes=100):
            super().__init__()
            self.conv1 = nn.Conv2d(3, 32, 3, 1, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(32)
            self.relu = nn.ReLU(inplace=True)
            self.layer1 = nn.Sequential(Block(32, 32, 1), Block(32, 32, 1))
            self.layer2 = nn.Sequential(Block(32, 64, 2), Block(64, 64, 1))
            self.layer3 = nn.Sequential(Block(64, 128, 2), Block(128, 128, 1))
            self.pool = nn.AdaptiveAvgPool2d(1)
            self.fc = nn.Linear(128, classes)

        def forward(self, x):
            x = self.relu(self.bn1(self.conv1(x)))
            x = self.layer3(self.layer2(self.layer1(x)))
            return self.fc(torch.flatten(self.pool(x), 1))

    torch.manual_seed(0)
    model = ResNetLike().cuda().to(memory_format=torch.channels_last)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    images = torch.randn(32, 3, 64, 64).contiguous(memory_format=torch.channels_last)
    labels = torch.randint(0, 100, (32,))
    for _ in range(steps):
        x, y = images.cuda(non_blocking=True), labels.cuda(non_blocking=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = loss_fn(model(x), y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        print(f"pytorch_modules: loss {loss.item():.4f}")
    torch.cuda.synchronize()
    return 0


def report(apptracer, path, name):
    done = subprocess.run([apptracer, "stats", "--report", name, "--format", "csv", path],
                          capture_output=True, text=True)
    if done.returncode != 0:
        print(f"FAIL stats --report {name}: {done.stderr.strip()}")
        return []
    return list(csv.DictReader(io.StringIO(done.stdout)))


def check(path, apptracer):
    failures = []

    def expect(ok, what):
        print(("ok   " if ok else "FAIL ") + what)
        if not ok:
            failures.append(what)

    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    meta = dict(db.execute("SELECT key, value FROM meta WHERE key LIKE 'framework_ranges.%'"))
    expect(meta.get("framework_ranges.ops", "").startswith("attached"),
           f"the op callbacks attached: {meta}")
    if "framework_ranges.op_sample_every" in meta:
        print(f"ops sampled: 1 in {meta['framework_ranges.op_sample_every']}")
    # Steps found from the launches alone (the program marks none) are the
    # iterations it ran: each ends with two memsets back to back, which once
    # made every step two.
    command = dict(db.execute("SELECT key, value FROM meta WHERE key = 'command_line'")).get("command_line", "")
    ran = int(command.split()[-1]) if command.split()[-1:] and command.split()[-1].isdigit() else STEPS
    summary = subprocess.run([apptracer, "stats", "--report", "steps", "--format", "json", path],
                             capture_output=True, text=True)
    found = json.loads(summary.stdout).get("step_summary", [{}])[0].get("steps") if summary.returncode == 0 else None
    if ran >= 20:  # a few iterations may leave their first ones to start-up
        expect(found is not None and abs(found - ran) <= 1, f"steps found: {found}, iterations run: {ran}")
    else:
        print(f"steps found: {found}, iterations run: {ran}")
    modules = report(apptracer, path, "modules")
    ops = report(apptracer, path, "ops")
    for name, rows, key in (("module", modules, "module"), ("op", ops, "op")):
        launches = sum(int(row["launches"]) for row in rows)
        unattributed = sum(int(row["launches"]) for row in rows if row[key] == "(none)")
        share = 1 - unattributed / launches if launches else 0
        print(f"{name}: {launches - unattributed} of {launches} launches attributed ({share:.1%})")
        expect(launches > 0 and share >= 0.95, f">= 95% of launches attributed to a {name}")
    phases = {(row["module"], row["phase"]) for row in modules}
    for module in ("layer1.0.conv1", "layer2.0.downsample.0", "fc"):
        expect((module, "forward") in phases and (module, "backward") in phases,
               f"{module} has launches forward and backward")
    expect(any(phase == "scope" and "Optimizer.step" in module for module, phase in phases),
           "the optimizer's step is a scope with launches")
    op_names = {row["op"] for row in ops}
    expect(any("conv" in op for op in op_names) and any("backward" in op.lower() for op in op_names),
           f"convolution ops, forward and backward: {sorted(op_names)[:12]}")
    # The memory view names the module and op that made what is live at the peak.
    memory = subprocess.run([apptracer, "stats", "--report", "memory", "--format", "json", path],
                            capture_output=True, text=True)
    tables = json.loads(memory.stdout) if memory.returncode == 0 else {}
    live = [row for row in tables.get("memory_live_at_peak", []) if row.get("producer")]
    named = [row for row in live if row.get("producer_module") and row.get("producer_op")]
    print(f"memory: {len(named)} of {len(live)} produced pieces live at the peak name a module and op, e.g. "
          f"{[(row['producer_module'], row['producer_op']) for row in named[:3]]}")
    expect(memory.returncode == 0 and named, "pieces live at the peak name the module and op that made them")
    # Every byte this program allocates is used: a finding that some memory
    # never was is a false alarm (cuBLAS's and cuDNN's workspaces are theirs).
    diagnosis = subprocess.run([apptracer, "diagnose", "--all", "--json", path], capture_output=True, text=True)
    rules = [f["rule"] for f in json.loads(diagnosis.stdout)["findings"]] if diagnosis.returncode == 0 else None
    expect(rules is not None and not {"memory_never_used", "allocation_never_used"} & set(rules),
           f"no memory said never used: {rules}")
    print("top modules by GPU time:")
    for row in modules[:8]:
        print(f"  {row['module']:<28} {row['phase']:<9} {row['launches']:>6} launches "
              f"{int(row['gpu_ns']) / 1e6:8.3f} ms")
    return 1 if failures else 0


def main():
    if len(sys.argv) >= 2 and sys.argv[1] == "run":
        try:
            import torch
        except ImportError:
            print("no torch here")
            return 77
        if not torch.cuda.is_available():
            print("no CUDA GPU for torch")
            return 77
        return run(int(sys.argv[2]) if len(sys.argv) > 2 else STEPS)
    if len(sys.argv) == 4 and sys.argv[1] == "check":
        return check(sys.argv[2], sys.argv[3])
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main())
