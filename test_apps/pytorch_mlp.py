#!/usr/bin/env python3
"""A few training steps of a small MLP on the GPU: the real-program check of
kernel-argument capture (PyTorch passes tensors inside by-value structs)."""
import sys

import torch


def main(steps=5):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(),
                                torch.nn.Linear(512, 10)).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    inputs = torch.randn(128, 256, device="cuda")
    labels = torch.randint(0, 10, (128,), device="cuda")
    for step in range(steps):
        optimizer.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(inputs), labels)
        loss.backward()
        optimizer.step()
    torch.cuda.synchronize()
    print(f"pytorch_mlp: {steps} steps, final loss {loss.item():.4f}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5)
