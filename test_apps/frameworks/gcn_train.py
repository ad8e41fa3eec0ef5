"""torch_geometric: a two-layer GCN trained on a random graph of 20,000
nodes and 200,000 edges, full-graph steps with Adam, 40 steps. Message
passing gathers and scatters by edge index: sparse, irregular kernels."""
import torch
from torch_geometric.nn import GCNConv

STEPS = 40
NODES, FEATURES, CLASSES = 20_000, 128, 16
generator = torch.Generator(device="cuda").manual_seed(0)
x = torch.randn(NODES, FEATURES, device="cuda", generator=generator)
edges = torch.randint(0, NODES, (2, 200_000), device="cuda", generator=generator)
labels = torch.randint(0, CLASSES, (NODES,), device="cuda", generator=generator)


class GCN(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.first, self.second = GCNConv(FEATURES, 256), GCNConv(256, CLASSES)

    def forward(self, x, edges):
        return self.second(torch.relu(self.first(x, edges)), edges)


torch.manual_seed(0)
model = GCN().cuda()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
losses = []
for step in range(STEPS):
    loss = torch.nn.functional.cross_entropy(model(x, edges), labels)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
losses = torch.stack(losses).cpu()
print("steps", STEPS, "loss decreased", bool(losses[-1] < losses[0]))
