#!/usr/bin/env python3
"""NCCL collectives through PyTorch, one process per rank (started by
check_collectives.py with RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT set, as
torchrun would). Each rank runs, in this order: 3 all_reduce (MAX the last),
1 broadcast from rank 0, 1 all_gather_into_tensor, 1 reduce_scatter_tensor,
then rank 0 sends one tensor to rank 1. With 4 ranks or more, also one
all_reduce in the rank's tensor-parallel pair (ranks 2k, 2k + 1) and one in
its data-parallel group (ranks of the same parity): sub-groups, each with a
communicator of its own. Prints a checksum per rank, the same traced and
untraced.
"""
import os

import torch
import torch.distributed as dist

ELEMENTS = 1 << 20


def main():
    rank = int(os.environ["RANK"])
    world = int(os.environ["WORLD_SIZE"])
    device = torch.device("cuda", rank % torch.cuda.device_count())
    torch.cuda.set_device(device)
    dist.init_process_group("nccl", device_id=device)
    x = torch.full((ELEMENTS,), float(rank + 1), device=device)
    dist.all_reduce(x)
    dist.all_reduce(x)
    dist.all_reduce(x, op=dist.ReduceOp.MAX)
    dist.broadcast(x, src=0)
    gathered = torch.empty(ELEMENTS * world, device=device)
    dist.all_gather_into_tensor(gathered, x)
    scattered = torch.empty(ELEMENTS // world, device=device)
    dist.reduce_scatter_tensor(scattered, gathered[: ELEMENTS].contiguous())
    if world >= 4:
        # Every rank creates every group, in the same order, as new_group requires.
        pairs = [dist.new_group([r, r + 1]) for r in range(0, world - 1, 2)]
        parities = [dist.new_group(list(range(p, world, 2))) for p in (0, 1)]
        dist.all_reduce(scattered, group=pairs[rank // 2])
        dist.all_reduce(scattered, group=parities[rank % 2])
    message = torch.arange(1024, dtype=torch.float32, device=device)
    if rank == 0:
        dist.send(message, dst=1)
    elif rank == 1:
        dist.recv(message, src=0)
    torch.cuda.synchronize()
    print(f"rank {rank}: {x.sum().item():.1f} {gathered.sum().item():.1f} "
          f"{scattered.sum().item():.1f} {message.sum().item():.1f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
