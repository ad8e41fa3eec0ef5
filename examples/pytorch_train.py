#!/usr/bin/env python3
"""The program behind examples/pytorch_train.db: a small MLP trained with
AdamW under bf16 autocast, fed by a DataLoader from pageable host memory
(pin_memory=False), each step an NVTX range named "step", the loss read
back every 10 steps. Small enough to bundle, and it has what the analyzer's
commands look for: host-to-device copies from pageable memory, the caching
allocator's tensors, synchronizations and repeated steps.

    apptracer record -o pytorch_train.db -- python3 pytorch_train.py [STEPS]
"""
import sys

import torch
from torch.utils.data import DataLoader, TensorDataset

BATCH = 256


def main():
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 30
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(1024, 2048), torch.nn.GELU(),
                                torch.nn.Linear(2048, 2048), torch.nn.GELU(),
                                torch.nn.Linear(2048, 10)).cuda()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    data = TensorDataset(torch.randn(steps * BATCH, 1024), torch.randint(0, 10, (steps * BATCH,)))
    loader = DataLoader(data, batch_size=BATCH, pin_memory=False)
    for step, (x, y) in enumerate(loader, start=1):
        torch.cuda.nvtx.range_push("step")
        x, y = x.cuda(), y.cuda()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = torch.nn.functional.cross_entropy(model(x), y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        if step % 10 == 0:
            print(f"step {step} loss {loss.item():.3f}", flush=True)
        torch.cuda.nvtx.range_pop()


if __name__ == "__main__":
    main()
