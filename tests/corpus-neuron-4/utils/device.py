"""Device helpers shared by the training and inference entry points.

Only "cpu", "gpu"/"cuda" and "mps" have been tested.
"""
from __future__ import annotations

import contextlib
import logging
from typing import Iterator

import torch

logger = logging.getLogger(__name__)

SUPPORTED_ACCELERATORS = {"cpu", "gpu", "cuda", "mps"}  # expect: kernels; may: device

# CUDA OOM is a subclass of RuntimeError on old releases and has its own type on new ones.
_CUDA_OOM = getattr(torch.cuda, "OutOfMemoryError", None)  # ok
_OOM_ERRORS = tuple(err for err in (_CUDA_OOM, MemoryError) if err is not None)


def resolve_accelerator(name: str) -> str:
    name = name.lower()
    if name not in SUPPORTED_ACCELERATORS:
        raise ValueError(f"accelerator must be one of {sorted(SUPPORTED_ACCELERATORS)}, got {name!r}")  # ok
    if name == "gpu":
        return "cuda"  # may: device
    return name


def check_export_device(device: str) -> None:
    if device not in ("cpu", "cuda"):  # expect: kernels; may: device
        raise NotImplementedError(f"export is not supported on {device}")


def device_module(device_type: str):
    """Return torch.<device_type> (torch.cuda, torch.mps, torch.xpu, ...)."""
    return getattr(torch, device_type, torch.cuda)  # ok


class StreamContext:
    """Run work on a side stream when the backend has streams, else inline."""

    def __init__(self, device: torch.device, stream: torch.cuda.Stream | None = None):  # ok
        self.device = device
        self.stream = stream

    @contextlib.contextmanager
    def activate(self) -> Iterator[None]:
        if self.stream is None:
            yield
            return
        mod = device_module(self.device.type)
        with mod.stream(self.stream):
            yield


def current_stream_or_none(device: torch.device) -> "torch.cuda.Stream | None":  # ok
    mod = device_module(device.type)
    return mod.current_stream() if hasattr(mod, "current_stream") else None


def run_with_oom_retry(fn, *args, retries: int = 2, **kwargs):
    for attempt in range(retries + 1):
        try:
            return fn(*args, **kwargs)
        except _OOM_ERRORS:  # ok
            if attempt == retries:
                raise
            logger.warning("out of memory on attempt %d, halving the batch", attempt + 1)
            kwargs["batch_size"] = max(1, kwargs.get("batch_size", 1) // 2)
    return None
