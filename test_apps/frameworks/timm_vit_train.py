"""timm's ViT-tiny trained as users train it: bf16 autocast, fused AdamW, a
loss read back every tenth step, 40 steps at 112x112. Attention, layer norms
and a patch embedding: a shape of program the project's own ones lack."""
import timm
import torch

STEPS = 40
torch.manual_seed(0)
model = timm.create_model("vit_tiny_patch16_224", pretrained=False, img_size=112, num_classes=100).cuda()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, fused=True)
images = torch.randn(32, 3, 112, 112, device="cuda")
labels = torch.randint(0, 100, (32,), device="cuda")
logged = []
for step in range(STEPS):
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = torch.nn.functional.cross_entropy(model(images), labels)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
    if step % 10 == 0 or step == STEPS - 1:
        logged.append(loss.item())
print("steps", STEPS, "loss decreased", logged[-1] < logged[0])
