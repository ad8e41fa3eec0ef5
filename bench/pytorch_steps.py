"""A real program for the benchmark: training steps of a small MLP on the GPU.

Small on purpose: its steps are launch-bound (tens of small kernels each),
which is where a tracer's per-call cost shows. Prints the median step time in
microseconds on its last line, for compare.sh. With BENCH_TORCH_PROFILER=1 the
steps run under torch.profiler (CPU and CUDA activities), the CUPTI-based
profiler PyTorch users know.

    python3 pytorch_steps.py [STEPS] [WARMUP]
"""
import contextlib
import os
import statistics
import sys
import time

import torch


def profiler():
    """BENCH_TORCH_PROFILER=1: torch.profiler (CPU and CUDA activities);
    BENCH_EMIT_NVTX=1: torch's own NVTX range per op
    (torch.autograd.profiler.emit_nvtx), which the tracer records as NVTX."""
    if os.environ.get("BENCH_EMIT_NVTX") == "1":
        return torch.autograd.profiler.emit_nvtx()
    if os.environ.get("BENCH_TORCH_PROFILER") != "1":
        return contextlib.nullcontext()
    activities = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    return torch.profiler.profile(activities=activities)


def main():
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    warmup = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    torch.manual_seed(0)
    device = torch.device("cuda")
    model = torch.nn.Sequential(
        torch.nn.Linear(512, 1024), torch.nn.ReLU(),
        torch.nn.Linear(1024, 1024), torch.nn.ReLU(),
        torch.nn.Linear(1024, 1024), torch.nn.ReLU(),
        torch.nn.Linear(1024, 10),
    ).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    inputs = torch.randn(64, 512, device=device)
    targets = torch.randint(0, 10, (64,), device=device)

    def step():
        optimizer.zero_grad(set_to_none=True)
        loss = torch.nn.functional.cross_entropy(model(inputs), targets)
        loss.backward()
        optimizer.step()

    times = []
    with profiler():
        for i in range(warmup + steps):
            start = time.perf_counter()
            step()
            torch.cuda.synchronize()  # a step ends when its GPU work does
            if i >= warmup:
                times.append(time.perf_counter() - start)
    print(f"{statistics.median(times) * 1e6:.1f}")


if __name__ == "__main__":
    main()
