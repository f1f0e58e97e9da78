"""Hand-written CPU reference for samples/ddp_nccl.py: DDP over gloo, launched by torchrun."""

import sys

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel


def main(steps: int) -> None:
    dist.init_process_group(backend="gloo")
    torch.manual_seed(0)
    model = DistributedDataParallel(nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1)))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    g = torch.Generator().manual_seed(dist.get_rank())
    for _ in range(steps):
        x = torch.randn(8, 16, generator=g)
        y = x.sum(dim=1, keepdim=True)
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
    if dist.get_rank() == 0:
        print(f"world={dist.get_world_size()} final_loss={loss.item():.6f}")
    dist.barrier()  # every rank finishes its steps before the group is torn down
    dist.destroy_process_group()


if __name__ == "__main__":
    main(int(sys.argv[1]))
