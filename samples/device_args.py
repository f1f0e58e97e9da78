"""Evaluation script whose device is chosen far from where it is used.

The device comes from an argparse default, a helper that builds "cuda:<rank>" and a default
argument.

    python device_args.py --rank 0
"""

import argparse

import torch
import torch.nn as nn


def device_for_rank(rank: int) -> str:
    return f"cuda:{rank}"


def evaluate(model: nn.Module, batches: list, device="cuda") -> float:
    total = 0.0
    with torch.no_grad():
        for batch in batches:
            total += model(batch.to(device)).abs().sum().item()
    return total


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default="cuda", help="where the batches are created")
    parser.add_argument("--rank", type=int, default=0)
    args = parser.parse_args()

    torch.manual_seed(0)
    model = nn.Linear(8, 2).to(device_for_rank(args.rank))
    g = torch.Generator().manual_seed(2)
    batches = [torch.randn(4, 8, generator=g).to(args.device) for _ in range(3)]
    print(f"output={evaluate(model, batches):.6f}")


if __name__ == "__main__":
    main()
