"""Process-group helpers shared by the trainer and the eval jobs."""
from __future__ import annotations

import datetime
import logging
import os
from dataclasses import dataclass

try: import torch
except ImportError: torch = None

logger = logging.getLogger(__name__)

# Preferred collective backend per device type; DIST_BACKEND overrides it.
BACKEND_FOR_DEVICE = {"cpu": "gloo", "cuda": "nccl", "xpu": "ccl"}  # expect: distributed; may: device
DEFAULT_BACKEND = os.getenv("DIST_BACKEND", "NCCL").lower()  # expect: distributed
MIXED_BACKEND = "cpu:gloo,cuda:nccl"  # expect: distributed; may: device
TIMEOUT = datetime.timedelta(minutes=int(os.getenv("DIST_TIMEOUT_MIN", "30")))


@dataclass
class CommConfig:
    backend: str = "NCCL"  # expect: distributed
    bucket_cap_mb: int = 25
    stream: torch.cuda.Stream | None = None  # ok


_OOM_ERROR = getattr(torch.cuda, "OutOfMemoryError", RuntimeError) if torch is not None else RuntimeError  # ok


def _device_type() -> str:
    if torch is None:
        return "cpu"
    for name in ("cuda", "xpu", "mps"):  # may: device
        mod = getattr(torch, name, None)
        if mod is not None and mod.is_available():
            return name
    return "cpu"


def device_module():
    """Return torch.<device> for the current host (torch.cuda on NVIDIA machines)."""  # ok
    return getattr(torch, _device_type(), torch.cuda)  # ok


def resolve_backend(requested: str | None = None) -> str:
    if requested:
        return requested.lower()
    backend = BACKEND_FOR_DEVICE.get(_device_type())
    if backend is None:
        logger.warning("No CUDA device found; falling back to %s", DEFAULT_BACKEND)  # ok
        backend = DEFAULT_BACKEND
    return backend


def init_distributed(cfg: CommConfig | None = None, mixed: bool = False) -> bool:
    if torch is None or int(os.environ.get("WORLD_SIZE", "1")) == 1:
        return False
    import torch.distributed as dist

    cfg = cfg or CommConfig()
    backend = MIXED_BACKEND if mixed else resolve_backend(cfg.backend)
    if backend == dist.Backend.NCCL:  # expect: distributed
        torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))  # expect: device|runtime
    dist.init_process_group(backend=backend, timeout=TIMEOUT)
    logger.info("initialised %s process group, rank %d of %d", backend, dist.get_rank(), dist.get_world_size())
    return True


def is_oom(exc: BaseException) -> bool:
    return isinstance(exc, _OOM_ERROR) or "out of memory" in str(exc)


def mean_loss(values) -> float:
    t = torch.tensor(values, dtype=torch.float64)  # ok
    return float(t.mean())
