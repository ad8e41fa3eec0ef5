"""torch.compile (default mode): inductor generates and launches Triton kernels."""
import torch


def step(x, w):
    return torch.nn.functional.gelu(x @ w).sum(dim=1) * 0.5


x = torch.randn(512, 512, device="cuda")
w = torch.randn(512, 512, device="cuda")
compiled = torch.compile(step)
for _ in range(5):
    out = compiled(x, w)
torch.cuda.synchronize()
print("compiled", torch.allclose(out, step(x, w), rtol=1e-2, atol=1e-2))
