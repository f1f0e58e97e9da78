"""A small regression model trained through torch.compile in a CUDA-graph mode.

    python compile_cuda.py --steps 20
"""

import argparse

import torch
import torch.nn as nn


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=20)
    args = parser.parse_args()

    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 32), nn.Tanh(), nn.Linear(32, 1)).to("cuda")
    compiled = torch.compile(model, mode="reduce-overhead")
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    g = torch.Generator().manual_seed(1)
    x = torch.randn(64, 16, generator=g).to("cuda")
    y = 2 * x[:, :1] - x[:, 1:2]
    for _ in range(args.steps):
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(compiled(x), y)
        loss.backward()
        optimizer.step()
    torch.cuda.synchronize()
    print(f"final_loss={loss.item():.8f}")


if __name__ == "__main__":
    main()
