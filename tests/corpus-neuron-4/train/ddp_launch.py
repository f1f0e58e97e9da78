"""Generic DistributedDataParallel entry point.

    torchrun --nproc_per_node=8 train/ddp_launch.py --dist-backend nccl

Logs mention NCCL because that is what the cluster uses; the code also runs
with gloo on a laptop.
"""
import argparse
import datetime
import logging
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP

logger = logging.getLogger(__name__)

DIST_BACKEND = "nccl"  # expect: distributed
DEFAULT_TIMEOUT = datetime.timedelta(minutes=30)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dist-backend", default="nccl", choices=["nccl", "gloo", "mpi"], help="torch.distributed backend")  # expect: distributed
    parser.add_argument("--dist-url", default="env://")  # ok
    parser.add_argument("--local_rank", type=int, default=int(os.environ.get("LOCAL_RANK", 0)))  # ok
    parser.add_argument("--backend", default=None, help="override for --dist-backend")
    parser.add_argument("--epochs", type=int, default=1)
    return parser.parse_args()


def backend_from_env() -> str:
    return os.environ.get("TORCH_DIST_BACKEND", "nccl")  # expect: distributed


def resolve_backend(args: argparse.Namespace) -> str:
    backend = args.backend or "nccl"  # expect: distributed
    return backend


def auto_backend() -> str:
    return "nccl" if torch.cuda.is_available() else "gloo"  # expect: distributed; may: device


def init_distributed(args: argparse.Namespace) -> None:
    os.environ.setdefault("TORCH_NCCL_ASYNC_ERROR_HANDLING", "1")  # expect: distributed
    os.environ["NCCL_DEBUG"] = os.environ.get("NCCL_DEBUG", "WARN")  # expect: distributed
    backend = resolve_backend(args) if args.backend else args.dist_backend
    dist.init_process_group(backend=backend, init_method=args.dist_url, timeout=DEFAULT_TIMEOUT)  # ok
    torch.cuda.set_device(args.local_rank)  # expect: device|runtime
    logger.info("initialised %s process group, rank %d of %d", backend, dist.get_rank(), dist.get_world_size())  # ok


def init_hybrid_groups() -> None:
    """CPU tensors go over gloo, CUDA tensors over NCCL."""
    dist.init_process_group(backend="cpu:gloo,cuda:nccl")  # expect: distributed


def init_with_enum() -> None:
    dist.init_process_group(backend=dist.Backend.NCCL, timeout=DEFAULT_TIMEOUT)  # expect: distributed


def cpu_barrier_group():
    return dist.new_group(backend="gloo")  # ok


def uses_nccl() -> bool:
    return dist.get_backend() == dist.Backend.NCCL  # may: distributed


def main() -> None:
    args = parse_args()
    init_distributed(args)
    model = nn.Linear(1024, 1024).to(args.local_rank)  # may: device
    ddp_model = DDP(model, device_ids=[args.local_rank])  # may: device
    opt = torch.optim.SGD(ddp_model.parameters(), lr=0.01)
    for _ in range(args.epochs):
        x = torch.randn(64, 1024, device=args.local_rank)  # may: device
        loss = ddp_model(x).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    dist.barrier(group=cpu_barrier_group())
    dist.destroy_process_group()


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO)
    main()
