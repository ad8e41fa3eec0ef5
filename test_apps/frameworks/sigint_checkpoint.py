"""Ctrl-C delivered to a training loop: its KeyboardInterrupt handler saves a checkpoint."""
import os
import signal

import torch

weights = torch.zeros(1 << 16, device="cuda")
steps = 0
try:
    while True:
        weights += 1
        steps += 1
        if steps == 50:
            os.kill(os.getpid(), signal.SIGINT)
except KeyboardInterrupt:
    torch.cuda.synchronize()
    print("checkpoint saved at", steps, int(weights[0].item()))
