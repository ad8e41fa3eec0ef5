"""A DataLoader with two worker processes and pinned memory feeding the GPU."""
import torch
from torch.utils.data import DataLoader, TensorDataset


def main():
    data = TensorDataset(torch.arange(4096 * 64, dtype=torch.float32).reshape(4096, 64))
    loader = DataLoader(data, batch_size=256, num_workers=2, pin_memory=True)
    total = torch.zeros((), device="cuda")
    batches = 0
    for epoch in range(2):
        for (batch,) in loader:
            total += batch.cuda(non_blocking=True).sum()
            batches += 1
    torch.cuda.synchronize()
    print("batches", batches, "sum", int(total.item()))


if __name__ == "__main__":
    main()
