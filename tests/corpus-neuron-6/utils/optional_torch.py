"""Optional torch integration for the metrics package."""
try: import torch
except ImportError:  # pragma: no cover
    torch = None

import numpy as np


def to_numpy(x):
    if torch is not None and isinstance(x, torch.Tensor):
        return x.detach().cpu().numpy()
    return np.asarray(x)


def default_device():
    if torch is None:
        return "cpu"
    return "cuda" if torch.cuda.is_available() else "cpu"  # expect: device


def gpu_memory_mb():
    if torch is None or not torch.cuda.is_available():  # expect: device|runtime
        return 0.0
    return torch.cuda.max_memory_allocated() / 2**20  # expect: device|runtime
