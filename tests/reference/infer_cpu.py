"""Hand-written CPU reference for samples/infer.py: the same model and batch under BF16 autocast."""

import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(64, 128), nn.GELU(), nn.Linear(128, 10)).eval()
batch = torch.randn(16, 64)
with torch.inference_mode(), torch.autocast("cpu", dtype=torch.bfloat16):
    logits = model(batch)
print(f"top1={logits.argmax(dim=1).tolist()}")
print(f"checksum={logits.float().abs().sum().item():.6f}")
