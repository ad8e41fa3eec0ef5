#!/usr/bin/env python3
"""A PyTorch training loop fed by a DataLoader, from pageable or pinned host
memory: the independent program pair `whatif --pin` must predict (its trace
with pin_memory=False against its runs with pin_memory=True). Written the
way such loops usually are: a TensorDataset of host tensors, two loader
workers, `.cuda(non_blocking=True)`, an MLP under bf16 autocast with AdamW.

    python3 whatif_dataloader.py [--pin-memory 0|1] [--steps N] [--batch N] [--features N] [--hidden N]

The timed steps are one NVTX range named "train" (whatif's phase of that
name), after warm-up steps and a synchronization; the program prints their
wall time as "work_ms", measured on the host around them.
"""
import argparse
import time

import torch
from torch.utils.data import DataLoader, TensorDataset

WARMUP = 10


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--pin-memory", type=int, choices=(0, 1), default=0)
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--features", type=int, default=4096)
    parser.add_argument("--hidden", type=int, default=4096)
    args = parser.parse_args()
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(args.features, args.hidden), torch.nn.GELU(),
                                torch.nn.Linear(args.hidden, args.hidden), torch.nn.GELU(),
                                torch.nn.Linear(args.hidden, 10)).cuda()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    samples = (WARMUP + args.steps) * args.batch
    data = TensorDataset(torch.randn(samples, args.features), torch.randint(0, 10, (samples,)))
    loader = DataLoader(data, batch_size=args.batch, num_workers=2, pin_memory=bool(args.pin_memory),
                        persistent_workers=False)
    start = None
    for step, (x, y) in enumerate(loader):
        if step == WARMUP:
            torch.cuda.synchronize()
            start = time.perf_counter()
            torch.cuda.nvtx.range_push("train")
        x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = torch.nn.functional.cross_entropy(model(x), y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_pop()
    print(f"work_ms {(time.perf_counter() - start) * 1e3:.3f}")
    print(f"loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
