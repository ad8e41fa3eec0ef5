#!/usr/bin/env python3
"""PyTorch memory with known answers, and the checks on its trace.

    pytorch_memory.py run SAMPLES.json            # the program (run under apptracer record)
    pytorch_memory.py check TRACE SAMPLES.json APPTRACER  # exits 1 if an assertion fails, 77 to skip

The program trains an MLP (every tensor a multiple of 2 MiB, so PyTorch's
block rounding does not blur the comparison) for STEPS steps, each inside an
NVTX range "step N", and plants:
  * a buffer of NEVER_USED_BYTES made before the first step and never touched;
  * a buffer of EARLY_BYTES made in step EARLY_MADE and first written (NVTX
    "first_use") in step EARLY_USED;
  * a leak: each step appends a new LEAK_BYTES tensor (NVTX "leak") to a list;
  * the known peak: a SPIKE_BYTES temporary written and dropped in step
    SPIKE_STEP, its cached segment then released.
At the end of each step (after synchronizing, before the step's range ends)
it samples torch.cuda.memory_allocated() and memory_reserved() into
SAMPLES.json.

The check asks `apptracer stats --report memory` and `apptracer diagnose`:
apptracer's framework live and reserved bytes at each step's end equal
PyTorch's within 1%; the peak is in step SPIKE_STEP with the spike live;
and the finding of memory_never_used, memory_allocated_early and memory_leak
(one per device) has the planted pieces as its largest group, with their
producer and bytes.
"""
import json
import subprocess
import sys

MiB = 1 << 20
STEPS = 10
BATCH, WIDTH = 512, 1024  # one activation: 512 x 1024 floats = 2 MiB
NEVER_USED_BYTES = 64 * MiB  # more than a cuBLAS workspace (32 MiB), which may go unused too
EARLY_BYTES = 8 * MiB
EARLY_MADE, EARLY_USED = 2, 6
LEAK_BYTES = 2 * MiB
SPIKE_BYTES = 256 * MiB
SPIKE_STEP = 3


def floats(nbytes):
    return nbytes // 4


def run(samples_path):
    import torch

    nvtx = torch.cuda.nvtx
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(WIDTH, WIDTH), torch.nn.ReLU(),
                                torch.nn.Linear(WIDTH, WIDTH)).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
    never_used = torch.empty(floats(NEVER_USED_BYTES), device="cuda")
    early = None
    kept = []
    samples = []
    for step in range(1, STEPS + 1):
        nvtx.range_push(f"step {step}")
        x = torch.randn(BATCH, WIDTH, device="cuda")
        hidden = model(x)
        loss = hidden.square().mean()
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        nvtx.range_push("leak")
        kept.append(hidden.detach() * 2.0)
        nvtx.range_pop()
        if step == EARLY_MADE:
            early = torch.empty(floats(EARLY_BYTES), device="cuda")
        if step == EARLY_USED:
            nvtx.range_push("first_use")
            early.fill_(1.0)
            nvtx.range_pop()
        if step == SPIKE_STEP:
            nvtx.range_push("spike")
            spike = torch.ones(floats(SPIKE_BYTES), device="cuda")
            spike.mul_(2.0)
            del spike
            torch.cuda.empty_cache()  # its segment goes too: the peak stays this step's
            nvtx.range_pop()
        del x, hidden, loss
        torch.cuda.synchronize()
        samples.append({"step": step, "allocated": torch.cuda.memory_allocated(),
                        "reserved": torch.cuda.memory_reserved()})
        nvtx.range_pop()
    with open(samples_path, "w") as out:
        json.dump({"steps": samples, "never_used_bytes": never_used.numel() * 4,
                   "kept": len(kept)}, out)
    print(f"pytorch_memory: {STEPS} steps, peak allocated {torch.cuda.max_memory_allocated()} B")


def within(a, b, fraction=0.01):
    return abs(a - b) <= fraction * max(abs(a), abs(b), 1)


def memory_tables(apptracer, trace):
    """`apptracer stats --report memory` of the trace, its tables by name."""
    stats = subprocess.run([apptracer, "stats", trace, "--report", "memory", "--format", "json"],
                           capture_output=True, text=True)
    if stats.returncode != 0:
        raise RuntimeError(f"stats --report memory {trace}: {stats.stderr.strip()}")
    return json.loads(stats.stdout)


def check(trace, samples_path, apptracer):
    failures = []

    def expect(ok, what):
        print(("ok   " if ok else "FAIL ") + what)
        if not ok:
            failures.append(what)

    samples = json.load(open(samples_path))["steps"]
    try:
        tables = memory_tables(apptracer, trace)
    except RuntimeError as error:
        print(f"FAIL {error}")
        return 1
    steps = {row["step"]: row for row in tables.get("memory_steps", []) if row["device"] == "GPU 0"}
    if not any(row["framework_live_bytes"] for row in steps.values()):
        print("skip: the trace has no PyTorch blocks (is torch's caching allocator tracked here? "
              "see meta sub_allocations.pytorch)")
        return 77
    for sample in samples:
        row = steps.get(sample["step"])
        expect(row is not None, f"step {sample['step']} is one of the trace's steps")
        if row is None:
            continue
        expect(within(row["framework_live_bytes"], sample["allocated"]),
               f"step {sample['step']}: live {row['framework_live_bytes']} B, torch allocated "
               f"{sample['allocated']} B")
        expect(within(row["framework_reserved_bytes"], sample["reserved"]),
               f"step {sample['step']}: reserved {row['framework_reserved_bytes']} B, torch reserved "
               f"{sample['reserved']} B")
    peak = next(row for row in tables["memory_peaks"] if row["device"] == "GPU 0")
    expect(peak["peak_step"] == SPIKE_STEP, f"the peak ({peak['peak_bytes']} B) is in step {SPIKE_STEP}: "
                                            f"{peak['peak_step']}")
    live = [row for row in tables["memory_live_at_peak"] if row["device"] == "GPU 0"]
    spike = [row for row in live if row["bytes"] == SPIKE_BYTES]
    expect(len(spike) == 1 and (spike[0]["producer_nvtx"] or "").endswith("spike"),
           f"the spike is live at the peak, made in NVTX 'spike': {spike}")
    print(f"peak {peak['peak_bytes']} B; freed at last use {peak['peak_if_freed_at_last_use']} B "
          f"(live peak {peak['peak_live_bytes']} B); cache released between steps "
          f"{peak['peak_if_cache_released_between_steps']} B")

    diagnose = subprocess.run([apptracer, "diagnose", trace, "--format", "json", "--all"], capture_output=True, text=True)
    if diagnose.returncode != 0:
        print(f"FAIL diagnose: {diagnose.stderr.strip()}")
        return 1
    memory = [f for f in json.loads(diagnose.stdout)["findings"] if f.get("saving_bytes") is not None]
    for number, f in enumerate(memory[:8], 1):
        print(f"  memory finding {number}: [{f['rule']}] {f['what']} ({f['saving_bytes']} B; "
              f"NVTX {f['where']['nvtx_range']}; {'; '.join(f['where']['names'])})")

    def first(rule):
        return next((f for f in memory if f["rule"] == rule), None)

    def largest_group(finding):
        """The finding's largest group of pieces as {column: value}."""
        if finding is None or not finding["details"] or not finding["details"]["rows"]:
            return {}
        return dict(zip(finding["details"]["columns"], finding["details"]["rows"][0]))

    never = first("memory_never_used")
    expect(largest_group(never).get("bytes") == NEVER_USED_BYTES and never["saving_bytes"] >= NEVER_USED_BYTES,
           f"memory_never_used's largest group is the unused buffer ({NEVER_USED_BYTES} B)")
    early = first("memory_allocated_early")
    expect(largest_group(early).get("bytes") == EARLY_BYTES and early["where"]["nvtx_range"].endswith("first_use"),
           f"memory_allocated_early's largest group is the early buffer ({EARLY_BYTES} B, first used in 'first_use')")
    leak = first("memory_leak")
    kept_after_first = (STEPS - 1) * LEAK_BYTES  # made from step 2 on, live to the end
    kept_at_peak = (SPIKE_STEP - 1) * LEAK_BYTES  # made from step 2 on, up to the peak
    expect(leak is not None and leak["where"]["nvtx_range"].endswith("leak")
           and largest_group(leak).get("bytes") == kept_after_first and leak["saving_bytes"] >= kept_at_peak,
           f"memory_leak's largest group is the list of kept tensors (made in 'leak', {kept_after_first} B "
           f"after the first step, at least {kept_at_peak} B at the peak)")
    return 1 if failures else 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["run"]:
        run(sys.argv[2])
    else:
        sys.exit(check(sys.argv[2], sys.argv[3], sys.argv[4]))
