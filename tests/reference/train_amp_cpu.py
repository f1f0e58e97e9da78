"""Hand-written CPU reference for samples/train_amp.py: same model, data, seeds and steps.

Written directly for the CPU as the unsafe fixes leave the sample: BF16 autocast (the CPU's
autocast type) and no loss scaling. No migrated code is used, so the test compares the migrated
sample's loss with an independent program.
"""

import sys

import torch
import torch.nn as nn


def main(steps: int, batch_size: int = 32) -> float:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    g = torch.Generator().manual_seed(0)
    x = torch.randn(256, 32, generator=g)
    w = torch.randn(32, 1, generator=g)
    y = x @ w + 0.1 * torch.randn(256, 1, generator=g)
    for step in range(steps):
        i = (step * batch_size) % 256
        optimizer.zero_grad(set_to_none=True)
        with torch.autocast("cpu", dtype=torch.bfloat16):
            loss = nn.functional.mse_loss(model(x[i : i + batch_size]), y[i : i + batch_size])
        loss.backward()
        optimizer.step()
    return loss.item()


if __name__ == "__main__":
    print(f"final_loss={main(int(sys.argv[1])):.8f}")
