"""The smallest PyTorch launch loop: one in-place add on a 4 KiB tensor,
5,000 times a batch, 7 batches after a warm-up; prints the median
microseconds per op on its last line, for compare.sh. What a tracer adds to
each framework op's launch, without a model's host work around it. With
BENCH_HOST_CPU=1 the line is "op=US op_cpu=US": the second the thread's CPU
time issuing the ops (real_steps.py says why).

    python3 torch_launch_loop.py
"""
import os
import statistics
import time

import torch

x = torch.zeros(1024, device="cuda")
for _ in range(2000):
    x.add_(1)
torch.cuda.synchronize()
per_op_us, cpu_us = [], []
for _ in range(7):
    start = time.perf_counter()
    start_cpu = time.thread_time()
    for _ in range(5000):
        x.add_(1)
    cpu_us.append((time.thread_time() - start_cpu) / 5000 * 1e6)
    torch.cuda.synchronize()
    per_op_us.append((time.perf_counter() - start) / 5000 * 1e6)
if os.environ.get("BENCH_HOST_CPU") == "1":
    print(f"op={statistics.median(per_op_us):.3f} op_cpu={statistics.median(cpu_us):.3f}")
else:
    print(f"{statistics.median(per_op_us):.3f}")
