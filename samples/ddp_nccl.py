"""Data-parallel training with DistributedDataParallel over NCCL, launched by torchrun.

    torchrun --nproc_per_node=2 ddp_nccl.py --steps 20
"""

import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=20)
    args = parser.parse_args()

    dist.init_process_group(backend="nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    torch.manual_seed(0)

    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1)).cuda()
    model = DDP(model, device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    g = torch.Generator().manual_seed(dist.get_rank())
    for step in range(args.steps):
        x = torch.randn(8, 16, generator=g).cuda()
        y = x.sum(dim=1, keepdim=True)
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
    if dist.get_rank() == 0:
        print(f"world={dist.get_world_size()} gpus={torch.cuda.device_count()} final_loss={loss.item():.6f}")
    dist.barrier()  # every rank finishes its steps before the group is torn down
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
