#!/usr/bin/env python3
"""A few training steps of a small convolutional network in bf16 and
channels_last, so that cuDNN's and cuBLAS's Hopper kernels (sm90_xmma_*,
nvjet_*: TMA tensor copies the Compute Sanitizer never sees) run the
convolutions and the GEMM: the GPU check (check_trace.py, case
exact_pytorch_conv_gemm) that `record --exact` reports no uninitialized read
on a correct program. Prints the loss of each step (lines starting
"pytorch_conv_gemm: ", which may differ run to run). Exits 77 where torch or
a GPU is missing.
"""
import sys

try:
    import torch
except ImportError:
    print("no torch here")
    sys.exit(77)

STEPS = 4


def main():
    if not torch.cuda.is_available():
        print("no CUDA GPU for torch")
        return 77
    torch.manual_seed(0)
    torch.backends.cudnn.benchmark = False
    model = torch.nn.Sequential(
        torch.nn.Conv2d(16, 64, 3, padding=1), torch.nn.BatchNorm2d(64), torch.nn.ReLU(),
        torch.nn.Conv2d(64, 64, 3, padding=1), torch.nn.ReLU(),
        torch.nn.AdaptiveAvgPool2d(4), torch.nn.Flatten(),
        torch.nn.Linear(64 * 16, 512), torch.nn.ReLU(), torch.nn.Linear(512, 10),
    ).cuda().to(memory_format=torch.channels_last)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    images = torch.randn(64, 16, 32, 32, device="cuda").to(memory_format=torch.channels_last)
    labels = torch.randint(0, 10, (64,), device="cuda")
    for step in range(STEPS):
        optimizer.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = torch.nn.functional.cross_entropy(model(images), labels)
        loss.backward()
        optimizer.step()
        print(f"pytorch_conv_gemm: step {step} loss {loss.item():.4f}")
    torch.cuda.synchronize()
    return 0


if __name__ == "__main__":
    sys.exit(main())
