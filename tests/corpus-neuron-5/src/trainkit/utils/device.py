"""Device-agnostic helpers (CUDA, XPU, MPS, NPU, ...).

Nothing here should assume a particular vendor: callers pass a device type string
and we dispatch through ``torch.<device_type>``.
"""
from __future__ import annotations

import functools
import os
from typing import TYPE_CHECKING, Any, Optional

import numpy as np
import torch

if TYPE_CHECKING:
    from torch.cuda import Stream  # ok

_CudaOOM = getattr(torch.cuda, "OutOfMemoryError", None)  # ok
OOM_ERRORS = tuple(e for e in (_CudaOOM, getattr(torch, "OutOfMemoryError", None)) if e is not None) + (MemoryError,)


def get_device_type() -> str:
    if hasattr(torch, "accelerator") and torch.accelerator.is_available():
        return torch.accelerator.current_accelerator().type
    return "cpu"


@functools.lru_cache(None)
def get_device_module(device_type: Optional[str] = None) -> Any:
    device_type = device_type or get_device_type()
    if device_type == "cpu":
        return torch.cpu
    return getattr(torch, device_type, torch.cuda)  # ok


def synchronize(device_type: Optional[str] = None) -> None:
    mod = get_device_module(device_type)
    if hasattr(mod, "synchronize"):
        mod.synchronize()  # ok


def empty_cache(device_type: str) -> None:
    getattr(torch, device_type).empty_cache()  # ok


class StreamContext:
    """Run a block on a side stream when the backend has streams."""

    def __init__(self, stream: torch.cuda.Stream | None = None) -> None:  # ok
        self.stream = stream
        self._prev = None

    def __enter__(self) -> "StreamContext":
        if self.stream is not None:
            mod = get_device_module(self.stream.device.type)
            self._prev = mod.current_stream()
            mod.set_stream(self.stream)
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._prev is not None:
            get_device_module(self._prev.device.type).set_stream(self._prev)


def record_stream(t: torch.Tensor, stream: "Stream") -> None:  # ok
    t.record_stream(stream)


def is_oom(exc: BaseException) -> bool:
    return isinstance(exc, OOM_ERRORS) or "out of memory" in str(exc).lower()  # ok


def local_world_size() -> int:
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")  # expect: environment
    if visible:
        return len([d for d in visible.split(",") if d.strip()])
    return torch.cuda.device_count()  # expect: device


def to_numpy64(t: torch.Tensor) -> np.ndarray:
    return t.detach().cpu().double().numpy()  # ok


def mean_std(values) -> tuple[float, float]:
    arr = np.asarray(values, dtype=np.float64)  # ok
    return float(arr.mean()), float(arr.std())
