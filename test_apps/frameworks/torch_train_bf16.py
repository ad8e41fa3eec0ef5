"""PyTorch eager training: bf16 autocast, AdamW, 30 steps on a small MLP."""
import torch

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(512, 1024), torch.nn.GELU(),
                            torch.nn.Linear(1024, 512)).cuda()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
x = torch.randn(256, 512, device="cuda")
target = torch.randn(256, 512, device="cuda")
losses = []
for step in range(30):
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = torch.nn.functional.mse_loss(model(x).float(), target)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
print("steps", len(losses), "loss decreased", losses[-1] < losses[0])
