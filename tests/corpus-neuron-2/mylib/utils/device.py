"""Device helpers that work on CUDA, Neuron, MPS and CPU hosts.

Nothing in this module hard-codes "cuda": callers pass a ``torch.device`` and
we dispatch on ``device.type``.  On Trainium/Inferentia the type is "neuron".
"""
from __future__ import annotations

import contextlib
import logging
import os
from typing import Iterator, Optional

import numpy as np
import torch

log = logging.getLogger(__name__)

# Raised on device out-of-memory; older torch releases do not define it.
OutOfMemoryError = getattr(torch.cuda, "OutOfMemoryError", RuntimeError)  # ok

# Name of the variable that restricts which devices a process sees, per device type.
_VISIBLE_DEVICES_VAR = {
    "cuda": "CUDA_VISIBLE_DEVICES",  # may: environment
    "neuron": "NEURON_RT_VISIBLE_CORES",  # ok
}


def _current_accelerator_type() -> Optional[str]:
    if not hasattr(torch, "accelerator"):
        return None
    acc = torch.accelerator.current_accelerator()  # ok
    return acc.type if acc is not None else None


def default_device_type() -> str:
    """Return the current accelerator type ("cuda", "neuron", "mps", ...) or "cpu"."""  # ok
    return _current_accelerator_type() or "cpu"


def default_device(index: int = 0) -> torch.device:
    device_type = default_device_type()
    if device_type == "cpu":
        return torch.device("cpu")
    return torch.device(device_type, index)  # ok


def device_module(device_type: str):
    """The torch sub-module for ``device_type`` (``torch.cuda``, ``torch.mps``, ...)."""  # ok
    return getattr(torch, device_type, torch.cuda)  # ok


def visible_device_ids(var: Optional[str] = None) -> list[int]:
    """Parse the visible-devices variable for the current accelerator."""
    var = var or _VISIBLE_DEVICES_VAR.get(default_device_type(), "")
    value = os.environ.get(var, "") if var else ""
    return [int(x) for x in value.split(",") if x.strip()]


def synchronize(device: torch.device) -> None:
    """Block until queued work on ``device`` is done (no-op on CPU)."""
    if device.type == "cpu":
        return
    if device.type == "neuron":  # ok
        torch.accelerator.synchronize()  # ok
        return
    device_module(device.type).synchronize()  # ok


def empty_cache(device: torch.device) -> None:
    mod = getattr(torch, device.type, None)  # ok
    if mod is not None and hasattr(mod, "empty_cache"):
        mod.empty_cache()


class StreamGuard:
    """Run a block on a side stream when the device supports streams."""

    def __init__(self, stream: torch.cuda.Stream | None = None) -> None:  # ok
        self.stream = stream

    @contextlib.contextmanager
    def __call__(self) -> Iterator[None]:
        if self.stream is None:
            yield
            return
        prev = torch.accelerator.current_stream()  # ok
        torch.accelerator.set_stream(self.stream)  # ok
        try:
            yield
        finally:
            torch.accelerator.set_stream(prev)


def host_stats(values: list[float]) -> dict[str, float]:
    """Summary statistics computed on the host in float64."""
    arr = np.asarray(values, dtype=np.float64)  # ok
    return {"mean": float(arr.mean()), "std": float(arr.std()), "max": float(arr.max())}


def is_double(t: torch.Tensor) -> bool:
    return t.dtype == torch.float64  # ok


def to_host_double(t: torch.Tensor) -> torch.Tensor:
    return t.detach().cpu().double()  # ok


def log_oom(exc: BaseException, batch_size: int) -> int:
    new_bs = max(1, batch_size // 2)
    log.warning("cuda/neuron OOM caught (%s); retrying with batch size %d", exc, new_bs)  # ok
    return new_bs
