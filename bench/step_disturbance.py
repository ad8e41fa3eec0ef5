"""What something beside the program costs its step (GPU), measured inside
one process: blocks of steps alone alternate with blocks disturbed.

    python3 step_disturbance.py WORKLOAD DISTURBANCE [BLOCKS] [BLOCK_STEPS] [WARMUP]

WORKLOAD is one of real_steps.py's. DISTURBANCE is
  spin=N          N processes spinning (woken with SIGCONT, parked with
                  SIGSTOP): a tracer's writer busy on cores of its own, which
                  on a virtual host may share a physical core, caches or a
                  power budget with the program's thread;
  cupti-asks=US   the bare CUPTI subscriber (preloaded) asking CUPTI for its
                  completed buffers every US microseconds, as the tracer's
                  writer asks after its passes.
Separate runs cannot rank such effects: the host's fast and slow modes last a
whole process and spread its steps by a third, alternation in one process
sees both sides under the same mode. BLOCKS blocks of BLOCK_STEPS steps each
side; prints each block's median step, then "alone=US disturbed=US" (medians
of the blocks' medians) on its last line.
"""
import ctypes
import os
import signal
import statistics
import subprocess
import sys
import time

import torch

from real_steps import STEPS


class Spinners:
    def __init__(self, count):
        # Without a tracer: LD_PRELOAD is not inherited.
        env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
        self.procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"], env=env)
                      for _ in range(count)]
        self.set(False)

    def set(self, on):
        for p in self.procs:
            os.kill(p.pid, signal.SIGCONT if on else signal.SIGSTOP)

    def close(self):
        for p in self.procs:
            p.kill()
            p.wait()


class CuptiAsks:
    def __init__(self, every_us):
        try:
            self.ask = ctypes.CDLL(None).bare_ask_cupti_every_us
        except AttributeError:
            sys.exit("step_disturbance.py: cupti-asks needs LD_PRELOAD=.../libbare_cupti_subscriber.so")
        self.ask.argtypes = [ctypes.c_uint]
        self.every_us = every_us

    def set(self, on):
        self.ask(self.every_us if on else 0)

    def close(self):
        self.set(False)


def disturbance(spec):
    kind, _, value = spec.partition("=")
    if kind == "spin" and value.isdigit():
        return Spinners(int(value))
    if kind == "cupti-asks" and value.isdigit():
        return CuptiAsks(int(value))
    sys.exit(f"step_disturbance.py: unknown disturbance {spec}; spin=N or cupti-asks=US")


def main():
    workload = sys.argv[1]
    if workload not in STEPS or len(sys.argv) < 3:
        sys.exit(f"usage: step_disturbance.py WORKLOAD DISTURBANCE [BLOCKS] [BLOCK_STEPS] [WARMUP]; "
                 f"WORKLOAD one of {', '.join(STEPS)}")
    blocks = int(sys.argv[3]) if len(sys.argv) > 3 else 8
    block_steps = int(sys.argv[4]) if len(sys.argv) > 4 else 10
    warmup = int(sys.argv[5]) if len(sys.argv) > 5 else 10
    torch.manual_seed(0)
    step = STEPS[workload]()
    for _ in range(warmup):
        step()
    torch.cuda.synchronize()
    beside = disturbance(sys.argv[2])
    medians = {"alone": [], "disturbed": []}
    try:
        for block in range(2 * blocks):
            side = "disturbed" if block % 2 else "alone"
            beside.set(side == "disturbed")
            times = []
            for _ in range(block_steps):
                torch.cuda.synchronize()
                start = time.perf_counter()
                step()
                torch.cuda.synchronize()
                times.append((time.perf_counter() - start) * 1e6)
            medians[side].append(statistics.median(times))
            print(f"block {block} {side} {medians[side][-1]:.1f}")
    finally:
        beside.close()
    print(" ".join(f"{side}={statistics.median(v):.1f}" for side, v in medians.items()))


if __name__ == "__main__":
    main()
