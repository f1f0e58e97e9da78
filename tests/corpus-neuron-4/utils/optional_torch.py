"""Helpers that work with or without PyTorch installed.

The core package only needs numpy; torch is used when it is there.
"""
import os
import random

import numpy as np

try: import torch
except ImportError: torch = None  # noqa: E701


def seed_everything(seed: int) -> None:
    random.seed(seed)
    os.environ["PYTHONHASHSEED"] = str(seed)
    np.random.seed(seed)
    if torch is None:
        return
    torch.manual_seed(seed)
    if torch.cuda.is_available():  # may: device
        torch.cuda.manual_seed_all(seed)  # expect: device|runtime


def to_device(batch: dict, device="cuda"):  # expect: device
    if torch is None:
        return batch
    return {k: v.to(device, non_blocking=True) if hasattr(v, "to") else v for k, v in batch.items()}


def as_numpy(x):
    if torch is not None and isinstance(x, torch.Tensor):
        return x.detach().cpu().numpy()
    return np.asarray(x)
