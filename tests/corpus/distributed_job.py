import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def setup():
    dist.init_process_group(backend="nccl")  # expect: distributed
    local_rank = int(os.environ["LOCAL_RANK"])  # ok
    torch.cuda.set_device(local_rank)  # expect: runtime
    os.environ["NCCL_DEBUG"] = "INFO"  # expect: distributed
    return local_rank


def wrap(model, local_rank):
    model = model.cuda(local_rank)  # expect: device
    return DDP(model, device_ids=[local_rank])  # expect: distributed


def device_for(rank):
    return f"cuda:{rank}"  # expect: device


def reduce(t):
    if dist.get_backend() == "nccl":  # ok
        dist.all_reduce(t)  # ok
    return t
