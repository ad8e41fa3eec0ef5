"""torch.compile(mode="reduce-overhead"): inductor's Triton kernels captured
in a CUDA graph, then the graph replayed. A checksum every 1000 replays.

    compile_replay.py REPLAYS
"""
import sys

import torch

from marks import mark

replays = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(1024, 1024), torch.nn.GELU(),
                            torch.nn.Linear(1024, 1024)).cuda().eval()
compiled = torch.compile(model, mode="reduce-overhead")
x = torch.randn(64, 1024, device="cuda")
with torch.no_grad():
    for replay in range(1, replays + 1):
        out = compiled(x)
        if replay % 1000 == 0:
            print(f"replay {replay} checksum {out.float().sum().item():.2f}", flush=True)
        elif replay % 100 == 0:
            torch.cuda.synchronize()
        mark(replay)
