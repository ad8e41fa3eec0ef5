"""A CUDA program that starts children with subprocess.run between GPU work."""
import subprocess
import sys

import torch

a = torch.ones(1 << 20, device="cuda")
subprocess.run(["/bin/true"], check=True)
subprocess.run([sys.executable, "-c", "print('child')"], check=True)
print("parent", int((a * 3).sum().item()))
