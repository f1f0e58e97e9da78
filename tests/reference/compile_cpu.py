"""Hand-written CPU reference for samples/compile_cuda.py: the same training, eager (no compile)."""

import sys

import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(16, 32), nn.Tanh(), nn.Linear(32, 1))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
g = torch.Generator().manual_seed(1)
x = torch.randn(64, 16, generator=g)
y = 2 * x[:, :1] - x[:, 1:2]
for _ in range(int(sys.argv[1])):
    optimizer.zero_grad()
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
print(f"final_loss={loss.item():.8f}")
