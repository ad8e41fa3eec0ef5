"""Two-rank FSDP2 training (torch.distributed.fsdp.fully_shard) of a small
transformer-like MLP stack under torchrun: all-gathers and reduce-scatters
every step. Rank 0 prints the loss every 100 steps.

    torchrun --nproc_per_node 2 fsdp_train.py STEPS
"""
import os
import sys

import torch
import torch.distributed as dist
from torch.distributed.fsdp import fully_shard

from marks import mark


def main():
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    torch.manual_seed(0)
    blocks = [torch.nn.Sequential(torch.nn.Linear(512, 2048), torch.nn.GELU(),
                                  torch.nn.Linear(2048, 512)) for _ in range(4)]
    model = torch.nn.Sequential(*blocks).cuda()
    for block in blocks:
        fully_shard(block)
    fully_shard(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    generator = torch.Generator(device="cuda").manual_seed(rank)
    x = torch.randn(32, 512, device="cuda", generator=generator)
    for step in range(1, steps + 1):
        loss = model(x).pow(2).mean()
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        if step % 100 == 0:
            value = loss.item()
            if rank == 0:
                print(f"step {step} loss {value:.4f}", flush=True)
        if rank == 0:
            mark(step)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
