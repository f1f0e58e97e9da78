"""Single-GPU regression training with CUDA mixed precision and loss scaling.

A typical CUDA-first training script: hard-coded device, `.cuda()`, CUDA AMP, a GradScaler,
cuDNN autotuning and CUDA memory logging. Run: python train_amp.py --steps 50
"""

import argparse

import torch
import torch.nn as nn


def build_model() -> nn.Module:
    return nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 1))


def make_data(n: int = 256):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(n, 32, generator=g)
    w = torch.randn(32, 1, generator=g)
    y = x @ w + 0.1 * torch.randn(n, 1, generator=g)
    return x, y


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--batch-size", type=int, default=32)
    args = parser.parse_args()

    torch.manual_seed(0)
    torch.backends.cudnn.benchmark = True
    device = torch.device("cuda")
    model = build_model().cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    scaler = torch.cuda.amp.GradScaler()
    x, y = make_data()

    for step in range(args.steps):
        i = (step * args.batch_size) % x.shape[0]
        xb = x[i : i + args.batch_size].to(device, non_blocking=True)
        yb = y[i : i + args.batch_size].to(device, non_blocking=True)
        optimizer.zero_grad(set_to_none=True)
        with torch.cuda.amp.autocast():
            loss = nn.functional.mse_loss(model(xb), yb)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        if step % 10 == 0:
            torch.cuda.synchronize()
            peak = torch.cuda.max_memory_allocated() / 2**20
            print(f"step {step} loss {loss.item():.4f} peak {peak:.1f} MiB")
    print(f"final_loss={loss.item():.8f}")


if __name__ == "__main__":
    main()
