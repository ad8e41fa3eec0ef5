"""Memory what-ifs against the program changed to do what they assume (GPU).
Each case is a PyTorch program (bad) and its twin (fixed). Both run
untraced and print torch.cuda.max_memory_allocated(); the bad one is then
traced, and the what-if's peak is set beside the fixed twin's measured peak:
  * "freed at last use": the bad program holds a buffer long after its last
    use, the fixed one frees it right after; the prediction is
    `apptracer stats --report memory`'s peak_if_freed_at_last_use (GPU 0);
  * activation checkpointing: the fixed program wraps a module in
    torch.utils.checkpoint; the prediction is `apptracer whatif
    --checkpoint MODULE`'s peak_if_checkpointed, from a trace recorded with
    APPTRACER_FRAMEWORK_CONTEXT=on.

    python3 memory_truth.py DIST [--keep DIR]
    python3 memory_truth.py CASE bad|fixed     (one twin: prints "max_allocated_bytes N")

Prints one line per case, "CASE: predicted X MiB, measured Y MiB (fixed
twin), error E%: pass|fail" (pass within 5%), and exits 1 when any fails.
The programs but the last use elementwise kernels only (no cuBLAS or cuDNN,
whose own memory torch may not count) and synchronize between phases, so each
block's last use on the GPU comes before what the host allocates next, as
the allocator sees it; every other tensor is dropped at its last use in
both twins.

Cases (S = 256 MiB):
  held_input   x (S) is last read making y (S), kept while a 2S temporary
               is made and summed: 4S in use, 3S freed at last use
  held_in_loop five steps, each making a (S), b = a * 2, then a 2S
               temporary; a is kept until the next step replaces it
  kept_stages  x and four stages, each the sine of the one before, all kept
               in a list to the end (5S) vs only the latest (2S)
  checkpointed_body
               three training steps of stem, body (three blocks) and head,
               each block tanh(sin(x) * scale) on S/4 activations; the fixed
               twin checkpoints `body` (what-if: --checkpoint body)
  gradients_held
               three SGD steps of four such blocks, the gradients cleared
               after the next forward pass (zero_grad between forward and
               backward, as many training loops do) vs right after the
               optimizer's step; also `diagnose`'s memory_freed_late saving
               (bytes off the peak) against the twins' measured difference
               (pass within 25%; only the finding is compared)
  resnet_gradients
               the same fix on five torchvision ResNet-18 training steps
               (channels_last, bf16 autocast, SGD with momentum, batch 64 at
               96x96; cuDNN's workspace is the allocator's, so torch counts
               it)
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

CASES = ("held_input", "held_in_loop", "kept_stages", "checkpointed_body", "gradients_held", "resnet_gradients")
# Cases whose diagnose finding is checked too: its rule.
FINDING_RULE = {"gradients_held": "memory_freed_late", "resnet_gradients": "memory_freed_late"}
# Cases whose fix is narrower than the what-if (which frees every tensor at
# its last use, not only the gradients): the finding alone is compared.
FINDING_ONLY = ("gradients_held", "resnet_gradients")
FINDING_TOLERANCE = 0.25
CHECKPOINTED_MODULE = {"checkpointed_body": "body"}
TOLERANCE = 0.05
MIB = 1 << 20
ELEMENTS = 256 * MIB // 4  # S: float32 elements of 256 MiB


def held_input(torch, fixed):
    x = torch.rand(ELEMENTS, device="cuda")
    torch.cuda.synchronize()
    y = torch.sin(x)
    torch.cuda.synchronize()
    if fixed:
        del x
    temporary = torch.rand(2 * ELEMENTS, device="cuda")
    total = temporary.sum()
    del temporary
    torch.cuda.synchronize()
    total += y.sum()
    del y
    torch.cuda.synchronize()
    return total


def held_in_loop(torch, fixed):
    total = torch.zeros((), device="cuda")
    a = None
    for _ in range(5):
        a = torch.rand(ELEMENTS, device="cuda")
        b = a * 2
        torch.cuda.synchronize()
        if fixed:
            a = None
        temporary = torch.rand(2 * ELEMENTS, device="cuda")
        total += temporary.sum() + b.sum()
        del temporary, b
        torch.cuda.synchronize()
    return total


def kept_stages(torch, fixed):
    stages = [torch.rand(ELEMENTS, device="cuda")]
    for _ in range(4):
        torch.cuda.synchronize()
        following = torch.sin(stages[-1])
        stages = stages + [following] if not fixed else [following]
        del following
    torch.cuda.synchronize()
    total = stages[-1].sum()
    del stages
    torch.cuda.synchronize()
    return total


def checkpointed_body(torch, fixed):
    from torch.utils.checkpoint import checkpoint
    elements = ELEMENTS // 4

    class Block(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.scale = torch.nn.Parameter(torch.ones(elements, device="cuda"))

        def forward(self, x):
            return torch.tanh(torch.sin(x) * self.scale)

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = Block()
            self.body = torch.nn.Sequential(Block(), Block(), Block())
            self.head = Block()

        def forward(self, x):
            hidden = self.stem(x)
            if fixed:
                hidden = checkpoint(self.body, hidden, use_reentrant=False)
            else:
                hidden = self.body(hidden)
            return self.head(hidden)

    net = Net()
    total = torch.zeros((), device="cuda")
    for _ in range(3):
        x = torch.rand(elements, device="cuda")
        loss = net(x).sum()
        loss.backward()
        total += loss.detach()
        del x, loss
        for parameter in net.parameters():
            parameter.grad = None
        torch.cuda.synchronize()
    return total


def backward_and_step(optimizer, loss, fixed):
    """A training step's end: the bad twin clears the gradients after the
    forward pass (so the last step's are held through it), the fixed one
    right after the optimizer's step."""
    if not fixed:
        optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
    if fixed:
        optimizer.zero_grad(set_to_none=True)


def gradients_held(torch, fixed):
    elements = ELEMENTS // 4
    blocks = [torch.nn.Parameter(torch.ones(elements, device="cuda")) for _ in range(4)]
    optimizer = torch.optim.SGD(blocks, lr=0.01)
    total = torch.zeros((), device="cuda")
    for _ in range(3):
        hidden = torch.rand(elements, device="cuda")
        for scale in blocks:
            hidden = torch.tanh(torch.sin(hidden) * scale)
        loss = hidden.sum()
        backward_and_step(optimizer, loss, fixed)
        total += loss.detach()
        del hidden, loss
        torch.cuda.synchronize()
    return total


def resnet_gradients(torch, fixed):
    import torchvision
    model = torchvision.models.resnet18(num_classes=1000).cuda().to(memory_format=torch.channels_last)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    images = torch.randn(64, 3, 96, 96, device="cuda").contiguous(memory_format=torch.channels_last)
    labels = torch.randint(0, 1000, (64,), device="cuda")
    total = torch.zeros((), device="cuda")
    for _ in range(5):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = torch.nn.functional.cross_entropy(model(images), labels)
        backward_and_step(optimizer, loss, fixed)
        total += loss.detach()
        del loss
    torch.cuda.synchronize()
    return total


def run_twin(case, variant):
    import torch
    if not torch.cuda.is_available():
        print("no CUDA device", file=sys.stderr)
        return 77
    torch.cuda.init()
    torch.cuda.reset_peak_memory_stats()
    globals()[case](torch, variant == "fixed").item()
    print(f"max_allocated_bytes {torch.cuda.max_memory_allocated()}", file=sys.stderr)
    return 0


def measured_peak(case, variant):
    done = subprocess.run([sys.executable, os.path.abspath(__file__), case, variant], capture_output=True,
                          text=True, timeout=600)
    if done.returncode != 0:
        raise SystemExit(f"{case} {variant} failed ({done.returncode}): {done.stderr.strip()[-500:]}")
    return int(done.stderr.split("max_allocated_bytes ")[-1].split()[0])


def predicted_peak(apptracer, case, trace):
    """(the what-if's peak, the traced program's most live) on GPU 0."""
    module = CHECKPOINTED_MODULE.get(case)
    env = dict(os.environ, APPTRACER_FRAMEWORK_CONTEXT="on") if module else None
    subprocess.run([apptracer, "record", "-f", "-o", trace, "--", sys.executable, os.path.abspath(__file__),
                    case, "bad"], check=True, capture_output=True, timeout=600, env=env)
    if module:
        whatif = subprocess.run([apptracer, "whatif", trace, "--checkpoint", module, "--format", "json"],
                                check=True, capture_output=True, text=True, timeout=600)
        rows = json.loads(whatif.stdout)["checkpoint"]["devices"]
        key = "peak_if_checkpointed"
    else:
        stats = subprocess.run([apptracer, "stats", trace, "--report", "memory", "--format", "json"], check=True,
                               capture_output=True, text=True, timeout=600)
        rows = json.loads(stats.stdout)["memory_peaks"]
        key = "peak_if_freed_at_last_use"
    gpu = [row for row in rows if row["device"] == "GPU 0"]
    if not gpu:
        raise SystemExit(f"{trace}: no GPU 0 in the what-if's answer")
    return gpu[0][key], gpu[0]["peak_live_bytes"]


def finding_saving(apptracer, trace, rule):
    """The bytes `diagnose` says fixing `rule` takes off the peak, and its fix."""
    done = subprocess.run([apptracer, "diagnose", trace, "--all", "--format", "json"], check=True,
                          capture_output=True, text=True, timeout=600)
    findings = [f for f in json.loads(done.stdout)["findings"] if f["rule"] == rule]
    if not findings:
        return None, ""
    return findings[0]["saving_bytes"], findings[0]["fix"]


def main():
    if len(sys.argv) == 3 and sys.argv[1] in CASES and sys.argv[2] in ("bad", "fixed"):
        return run_twin(sys.argv[1], sys.argv[2])
    parser = argparse.ArgumentParser()
    parser.add_argument("dist")
    parser.add_argument("--keep", help="keep the traces here")
    args = parser.parse_args()
    apptracer = os.path.join(args.dist, "bin", "apptracer")
    failed = 0
    with tempfile.TemporaryDirectory() as temporary:
        work = args.keep or temporary
        os.makedirs(work, exist_ok=True)
        for case in CASES:
            bad = measured_peak(case, "bad")
            fixed = measured_peak(case, "fixed")
            predicted, traced_live = predicted_peak(apptracer, case, os.path.join(work, f"{case}.db"))
            if case not in FINDING_ONLY:
                error = (predicted - fixed) / fixed
                passed = abs(error) <= TOLERANCE
                failed += not passed
                print(f"{case}: predicted {predicted / MIB:.1f} MiB, measured {fixed / MIB:.1f} MiB (fixed twin; "
                      f"bad twin {bad / MIB:.1f} MiB measured, {traced_live / MIB:.1f} MiB traced), "
                      f"error {error:+.1%}: {'pass' if passed else 'fail'}", flush=True)
            rule = FINDING_RULE.get(case)
            if rule:
                saving, fix = finding_saving(apptracer, os.path.join(work, f"{case}.db"), rule)
                measured = bad - fixed
                found = saving is not None and measured > 0
                error = (saving - measured) / measured if found else float("nan")
                passed = found and abs(error) <= FINDING_TOLERANCE
                failed += not passed
                said = f"{saving / MIB:.1f} MiB" if saving is not None else "no finding"
                print(f"{case}: {rule} saves {said}, the fixed twin measured {measured / MIB:.1f} MiB less "
                      f"({bad / MIB:.1f} -> {fixed / MIB:.1f} MiB), "
                      f"error {error:+.1%}: {'pass' if passed else 'fail'} (fix: {fix})", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
