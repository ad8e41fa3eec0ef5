"""Training fed by a DataLoader with two worker processes and pinned memory:
each batch is made by a worker, pinned by the loader's thread and copied to
the GPU asynchronously; an MLP trains on it. The loss every 100 steps.

    dataloader_train.py STEPS
"""
import sys

import torch
from torch.utils.data import DataLoader, Dataset

from marks import mark

BATCH = 64


class Synthetic(Dataset):
    def __init__(self, samples):
        self.samples = samples

    def __len__(self):
        return self.samples

    def __getitem__(self, index):
        generator = torch.Generator().manual_seed(index)
        return torch.randn(512, generator=generator), index % 10


def main():
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(512, 1024), torch.nn.ReLU(),
                                torch.nn.Linear(1024, 10)).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    loader = DataLoader(Synthetic(steps * BATCH), batch_size=BATCH, num_workers=2,
                        pin_memory=True, persistent_workers=True)
    for step, (x, y) in enumerate(loader, start=1):
        x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
        loss = torch.nn.functional.cross_entropy(model(x), y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        if step % 100 == 0:
            print(f"step {step} loss {loss.item():.3f}", flush=True)
        mark(step)


if __name__ == "__main__":
    main()
