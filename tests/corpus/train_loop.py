"""Training script in the shape of many research repositories."""
import argparse
import logging
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.cuda.amp import GradScaler, autocast  # ok

log = logging.getLogger(__name__)


def get_args():
    p = argparse.ArgumentParser()
    p.add_argument("--device", default="cuda")  # expect: device
    p.add_argument("--epochs", type=int, default=3)  # ok
    return p.parse_args()


def main():
    args = get_args()
    torch.manual_seed(0)  # ok
    torch.cuda.manual_seed_all(0)  # expect: runtime
    torch.backends.cudnn.benchmark = True  # expect: runtime
    torch.backends.cuda.matmul.allow_tf32 = True  # expect: precision
    device = torch.device(args.device)  # ok
    model = nn.Linear(8, 1).to(device)  # ok
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    scaler = GradScaler()  # expect: precision
    log.info("training on cuda with %d GPUs", torch.cuda.device_count())  # expect: runtime
    for epoch in range(args.epochs):
        x = torch.randn(4, 8, device=device)  # ok
        with autocast(dtype=torch.float16):  # expect: precision
            loss = F.mse_loss(model(x), torch.zeros(4, 1, device=device))
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        if torch.cuda.is_available():  # expect: runtime
            torch.cuda.synchronize()  # expect: runtime
        print(f"epoch {epoch} cuda memory {torch.cuda.memory_allocated()}")  # expect: runtime
    torch.save(model.state_dict(), "model.pt")  # ok
    state = torch.load("model.pt", map_location="cuda:0")  # expect: device
    print("done on cuda")  # ok


if __name__ == "__main__":
    main()
