"""Hand-written CPU reference for samples/device_args.py."""

import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Linear(8, 2)
g = torch.Generator().manual_seed(2)
batches = [torch.randn(4, 8, generator=g) for _ in range(3)]
with torch.no_grad():
    total = sum(model(b).abs().sum().item() for b in batches)
print(f"output={total:.6f}")
