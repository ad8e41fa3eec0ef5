#!/usr/bin/env python3
"""Memory on a multi-rank FSDP job: NCCL's bytes and the framework's, both
in the peak, and the framework's live and reserved bytes equal PyTorch's.

    torchrun --standalone --nproc_per_node N fsdp_memory.py run SAMPLES_DIR
    fsdp_memory.py check TRACES_DIR SAMPLES_DIR APPTRACER   # exits 1 if an assertion fails, 77 to skip

The program (run under `apptracer record -o TRACES_DIR/fsdp_memory-%p.db --
torchrun ...`) trains a stack of fully_shard-ed MLP blocks for STEPS steps,
each inside an NVTX range "step N": every step all-gathers the parameters and
reduce-scatters the gradients through NCCL, whose communicator buffers
PyTorch's allocator never sees. At the end of each step (after
synchronizing, inside the step's range) each rank samples
torch.cuda.memory_allocated() and memory_reserved() into
SAMPLES_DIR/rank-R.json with its process id.

The check asks `apptracer stats --report memory` of each rank's trace
(matched to its samples by process id): at GPU memory's peak both NCCL
("nccl/mpi") and PyTorch's tensors own bytes, the program none of its own
(NCCL's connection buffers, set up when a group ends, are NCCL's), and the
framework's live and reserved bytes at each step's end equal PyTorch's
within 1%.
"""
import glob
import json
import os
import sys

from pytorch_memory import memory_tables, within

STEPS = 8
WIDTH, HIDDEN, BLOCKS, BATCH = 1024, 4096, 4, 64


def run(samples_dir):
    import torch
    import torch.distributed as dist
    from torch.distributed.fsdp import fully_shard

    dist.init_process_group("nccl")
    rank = dist.get_rank()
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    torch.manual_seed(0)
    blocks = [torch.nn.Sequential(torch.nn.Linear(WIDTH, HIDDEN), torch.nn.GELU(),
                                  torch.nn.Linear(HIDDEN, WIDTH)) for _ in range(BLOCKS)]
    model = torch.nn.Sequential(*blocks).cuda()
    for block in blocks:
        fully_shard(block)
    fully_shard(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    generator = torch.Generator(device="cuda").manual_seed(rank)
    x = torch.randn(BATCH, WIDTH, device="cuda", generator=generator)
    samples = []
    for step in range(1, STEPS + 1):
        torch.cuda.nvtx.range_push(f"step {step}")
        loss = model(x).pow(2).mean()
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        del loss
        torch.cuda.synchronize()
        samples.append({"step": step, "allocated": torch.cuda.memory_allocated(),
                        "reserved": torch.cuda.memory_reserved()})
        torch.cuda.nvtx.range_pop()
    with open(os.path.join(samples_dir, f"rank-{rank}.json"), "w") as out:
        json.dump({"pid": os.getpid(), "rank": rank, "steps": samples}, out)
    if rank == 0:
        print(f"fsdp_memory: {dist.get_world_size()} ranks, {STEPS} steps")
    dist.barrier()
    dist.destroy_process_group()


def check(traces_dir, samples_dir, apptracer):
    failures = []

    def expect(ok, what):
        print(("ok   " if ok else "FAIL ") + what)
        if not ok:
            failures.append(what)

    ranks = [json.load(open(path)) for path in sorted(glob.glob(os.path.join(samples_dir, "rank-*.json")))]
    if len(ranks) < 2:
        print(f"skip: {len(ranks)} rank(s) ran (needs 2 GPUs)")
        return 77
    traces = {}
    for path in glob.glob(os.path.join(traces_dir, "*.db")):
        tables = memory_tables(apptracer, path)
        for row in tables.get("memory_peaks", []):
            traces[row["pid"]] = (path, tables)
    for samples in ranks:
        rank = samples["rank"]
        found = traces.get(samples["pid"])
        expect(found is not None, f"rank {rank} (pid {samples['pid']}) has a trace with memory")
        if found is None:
            continue
        path, tables = found
        owners = {row["owner"]: row["bytes"] for row in tables["memory_owners_at_peak"]
                  if row["device"].startswith("GPU")}
        peak = next(row for row in tables["memory_peaks"] if row["device"].startswith("GPU"))
        print(f"rank {rank}: peak {peak['peak_bytes']} B in step {peak['peak_step']}; owners at the peak: "
              + ", ".join(f"{owner} {size} B" for owner, size in sorted(owners.items())))
        expect(owners.get("nccl/mpi", 0) > 0, f"rank {rank}: NCCL's bytes are in the peak")
        expect(owners.get("pytorch tensors", 0) > 0, f"rank {rank}: PyTorch's tensors are in the peak")
        # The program allocates only through PyTorch: what NCCL maps when a
        # group ends (its connections' buffers) is NCCL's, not the program's.
        expect(owners.get("program", 0) == 0, f"rank {rank}: no bytes of the program's own at the peak")
        steps = {row["step"]: row for row in tables.get("memory_steps", []) if row["device"].startswith("GPU")}
        for sample in samples["steps"]:
            row = steps.get(sample["step"])
            expect(row is not None and within(row["framework_live_bytes"], sample["allocated"])
                   and within(row["framework_reserved_bytes"], sample["reserved"]),
                   f"rank {rank} step {sample['step']}: live {row and row['framework_live_bytes']} B vs torch "
                   f"{sample['allocated']} B, reserved {row and row['framework_reserved_bytes']} B vs torch "
                   f"{sample['reserved']} B")
    return 1 if failures else 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["run"]:
        run(sys.argv[2])
    else:
        sys.exit(check(sys.argv[2], sys.argv[3], sys.argv[4]))
