"""Hand-written CPU reference for samples/train_notebook.ipynb."""

import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(20, 32), nn.ReLU(), nn.Linear(32, 3))
g = torch.Generator().manual_seed(3)
x = torch.randn(128, 20, generator=g)
labels = (x[:, 0] > 0).long() + (x[:, 1] > 0.5).long()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(15):
    optimizer.zero_grad()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        logits = model(x)
    loss = nn.functional.cross_entropy(logits.float(), labels)
    loss.backward()
    optimizer.step()
print(f"final_loss={loss.item():.8f}")
