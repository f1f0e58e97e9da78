"""Helpers that pick a process-group backend for the different launchers we support."""
import os
from datetime import timedelta

import torch
import torch.distributed as dist

DEFAULT_BACKEND = "nccl"  # expect: distributed
MIXED_BACKEND = "cpu:gloo,cuda:nccl"  # expect: distributed
CPU_BACKEND = "gloo"  # ok


def backend_from_env() -> str:
    return os.environ.get("DIST_BACKEND", "nccl")  # expect: distributed


def auto_backend() -> str:
    return "nccl" if torch.cuda.is_available() else "gloo"  # expect: distributed, device|runtime


def init_default(timeout_min: int = 30) -> None:
    if dist.is_initialized():
        return
    dist.init_process_group(backend=DEFAULT_BACKEND, timeout=timedelta(minutes=timeout_min))  # may: distributed


def init_enum() -> None:
    dist.init_process_group(backend=dist.Backend.NCCL)  # expect: distributed


def init_mixed() -> None:
    # CPU tensors (object collectives) go over gloo, device tensors over nccl
    dist.init_process_group(backend=MIXED_BACKEND)  # may: distributed


def init_literal_mixed() -> None:
    dist.init_process_group("cpu:gloo,cuda:nccl", init_method="env://")  # expect: distributed


def new_cpu_group(ranks):
    return dist.new_group(ranks=ranks, backend=CPU_BACKEND)  # ok


def is_nccl_group(group=None) -> bool:
    return dist.get_backend(group) == dist.Backend.NCCL  # may: distributed


def configure_watchdog() -> None:
    os.environ.setdefault("TORCH_NCCL_ASYNC_ERROR_HANDLING", "1")  # expect: distributed
    os.environ["TORCH_NCCL_BLOCKING_WAIT"] = "0"  # expect: distributed
    os.environ.setdefault("NCCL_IB_TIMEOUT", "22")  # expect: distributed
