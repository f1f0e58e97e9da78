"""Process-group helpers shared by the trainers."""
from __future__ import annotations

import datetime
import logging
import os
from typing import Any, Dict, Optional

import torch
import torch.distributed as dist

from .config import DistributedConfig

logger = logging.getLogger(__name__)

_DEFAULT_TIMEOUT = datetime.timedelta(minutes=30)
_ENV_BACKEND = os.getenv("DIST_BACKEND", "nccl")  # expect: distributed


class ProcessGroupManager:
    BACKEND = "nccl"  # expect: distributed
    FALLBACK_BACKEND = "gloo"

    def __init__(self, cfg: Optional[DistributedConfig] = None):
        self.cfg = cfg or DistributedConfig()

    def init(self, **kwargs: Any) -> None:
        if dist.is_initialized():
            return
        backend = kwargs.pop("backend", self.BACKEND)  # may: distributed
        dist.init_process_group(backend=backend, timeout=_DEFAULT_TIMEOUT, **kwargs)  # may: distributed
        logger.info("initialised %s process group (rank %d)", backend, dist.get_rank())


def pick_backend() -> str:
    """NCCL on GPUs, gloo everywhere else."""
    return "nccl" if torch.cuda.is_available() else "gloo"  # expect: distributed; may: device


def default_pg_options(world_size: int) -> Dict[str, Any]:
    return {
        "backend": dist.Backend.NCCL,  # expect: distributed
        "world_size": world_size,
        "timeout": _DEFAULT_TIMEOUT,
    }


def init_distributed(backend: str = "nccl", **kwargs: Any) -> int:  # expect: distributed
    os.environ.setdefault("TORCH_NCCL_ASYNC_ERROR_HANDLING", "1")  # expect: distributed
    os.environ.setdefault("NCCL_DEBUG", "WARN")  # expect: distributed
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    torch.cuda.set_device(local_rank)  # expect: device
    dist.init_process_group(backend=backend, **kwargs)  # may: distributed
    return local_rank


def init_hybrid() -> None:
    """CPU tensors go through gloo, device tensors through NCCL."""
    dist.init_process_group(backend="cpu:gloo,cuda:nccl")  # expect: distributed; may: device


def init_from_kwargs(**overrides: Any) -> None:
    pg_kwargs = dict(backend="nccl", init_method="env://")  # expect: distributed
    pg_kwargs.update(overrides)
    dist.init_process_group(**pg_kwargs)  # may: distributed


def init_from_env() -> None:
    dist.init_process_group(backend=_ENV_BACKEND, timeout=_DEFAULT_TIMEOUT)  # may: distributed


def cleanup() -> None:
    if dist.is_available() and dist.is_initialized():
        dist.barrier()
        dist.destroy_process_group()
