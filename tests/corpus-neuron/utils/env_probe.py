"""Print what a training job can see: framework build, accelerator, launcher environment.

Used as `python -m utils.env_probe` at the top of every Slurm job so the log says which
build of torch ran and which devices it was given.
"""
from __future__ import annotations

import json
import os
import platform
import sys
import warnings

try: import torch
except ImportError: torch = None  # ok

VISIBLE_ENV = ("CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES", "LOCAL_RANK", "WORLD_SIZE")  # expect: environment

OOM_ERROR = getattr(torch.cuda, "OutOfMemoryError", RuntimeError) if torch is not None else MemoryError  # ok


def pick_device() -> "torch.device":
    if torch is None:
        raise RuntimeError("PyTorch is not installed in this environment")
    if torch.cuda.is_available():  # expect: device
        return torch.device("cuda", int(os.environ.get("LOCAL_RANK", 0)))  # expect: device
    return torch.device("cpu")


def device_module(device_type: str):
    """torch.cuda, torch.xpu, torch.mps ... whichever module matches the device type."""
    return getattr(torch, device_type, torch.cuda)  # ok


def describe_accelerator() -> dict:
    info = {
        "python": platform.python_version(),
        "torch": getattr(torch, "__version__", None),
        "host": platform.node(),
    }
    if torch is not None:
        if torch.version.cuda is None:  # expect: environment|dependencies
            warnings.warn("this torch build has no CUDA support; install the cu121 wheel")
        info["threads"] = torch.get_num_threads()
    info["visible"] = [v for v in os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",") if v]  # expect: environment
    info["launcher_env"] = {name: os.environ.get(name) for name in VISIBLE_ENV}
    return info


if __name__ == "__main__":
    json.dump(describe_accelerator(), sys.stdout, indent=2, sort_keys=True)
    sys.stdout.write("\n")
