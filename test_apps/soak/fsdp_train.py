"""FSDP2 training (torch.distributed.fsdp.fully_shard) of a small
transformer-like MLP stack under torchrun, on any number of ranks:
all-gathers and reduce-scatters every step, each step an NVTX range
"step N". Rank 0 prints the loss every 100 steps. With `ddp` the same model
is trained by DistributedDataParallel instead (all-reduces of gradient
buckets).

    [FSDP_STRAGGLER=RANK:STEP:MS] torchrun --nproc_per_node N fsdp_train.py STEPS [fsdp|ddp]

FSDP_STRAGGLER makes one rank a straggler once: RANK waits for its GPU, then
sleeps MS milliseconds on the host before step STEP's forward (what a
cross-rank analysis must find; without the wait, the GPU work the rank had
queued hid the sleep).
"""
import os
import sys
import time

import torch
import torch.distributed as dist
from torch.distributed.fsdp import fully_shard
from torch.nn.parallel import DistributedDataParallel

from marks import mark


def main():
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    wrapping = sys.argv[2] if len(sys.argv) > 2 else "fsdp"
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    torch.manual_seed(0)
    blocks = [torch.nn.Sequential(torch.nn.Linear(512, 2048), torch.nn.GELU(),
                                  torch.nn.Linear(2048, 512)) for _ in range(4)]
    model = torch.nn.Sequential(*blocks).cuda()
    if wrapping == "ddp":
        model = DistributedDataParallel(model, device_ids=[local_rank])
    else:
        for block in blocks:
            fully_shard(block)
        fully_shard(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    generator = torch.Generator(device="cuda").manual_seed(rank)
    x = torch.randn(32, 512, device="cuda", generator=generator)
    straggler = [int(v) for v in os.environ.get("FSDP_STRAGGLER", "-1:0:0").split(":")]
    for step in range(1, steps + 1):
        torch.cuda.nvtx.range_push(f"step {step}")
        if [rank, step] == straggler[:2]:
            # After its GPU caught up (as a loss.item() would have it): a
            # sleep the queued GPU work would otherwise hide.
            torch.cuda.synchronize()
            time.sleep(straggler[2] / 1000)
        loss = model(x).pow(2).mean()
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        if step % 100 == 0:
            value = loss.item()
            if rank == 0:
                print(f"step {step} loss {value:.4f}", flush=True)
        torch.cuda.nvtx.range_pop()
        if rank == 0:
            mark(step)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
