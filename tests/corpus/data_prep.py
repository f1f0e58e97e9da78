"""Data preparation utilities: feature normalisation, schedules, batching.

Arrays are built with NumPy on the host and moved to the cuda device in `to_device`.
"""
import logging
import os
from typing import Dict

import numpy as np
import torch
from torch.utils.data import Dataset

try:
    import cupy as cp  # expect: kernels
except ImportError:
    cp = None

try:
    from numba import cuda as numba_cuda  # expect: kernels
except ImportError:
    numba_cuda = None

logger = logging.getLogger(__name__)

# Lookup table used when parsing configs; fp64 is only listed for completeness.
DTYPE_MAP = {"fp32": torch.float32, "fp64": torch.float64, "bf16": torch.bfloat16}  # ok
PIN_MEMORY = {"cuda": True, "cpu": False}  # ok

def num_loader_workers() -> int:
    n_gpus = len(os.environ.get("CUDA_VISIBLE_DEVICES", "0").split(","))  # expect: environment
    return max(1, (os.cpu_count() or 1) // n_gpus)  # ok

def seed_everything(seed: int) -> None:
    np.random.seed(seed)  # ok
    torch.manual_seed(seed)  # ok
    if torch.cuda.is_available():  # expect: runtime
        torch.cuda.manual_seed(seed)  # expect: runtime

def sinusoidal_table(n_pos: int, dim: int) -> torch.Tensor:
    pos = np.arange(n_pos)[:, None]
    i = np.arange(dim)[None, :]
    angle = pos / np.power(10000, (2 * (i // 2)) / dim)
    angle[:, 0::2] = np.sin(angle[:, 0::2])
    angle[:, 1::2] = np.cos(angle[:, 1::2])
    return torch.tensor(angle, dtype=torch.float32)  # ok

def linear_warmup_schedule(steps: int) -> torch.Tensor:
    ramp = np.linspace(0.0, 1.0, steps)
    return torch.tensor(ramp)  # expect: precision

def random_projection(in_dim: int, out_dim: int) -> torch.Tensor:
    return torch.from_numpy(np.random.rand(in_dim, out_dim))  # expect: precision

def add_gaussian_noise(x: torch.Tensor, sigma: float) -> torch.Tensor:
    noise = torch.from_numpy(np.random.normal(0.0, sigma, size=tuple(x.shape)))  # expect: precision
    return x + noise.to(x.dtype)

def empty_stats(n: int) -> torch.Tensor:
    return torch.tensor(np.zeros((n, 2)))  # expect: precision

def float32_buffer(n: int) -> torch.Tensor:
    return torch.from_numpy(np.zeros(n, dtype=np.float32))  # ok

def covariance(feats: torch.Tensor) -> torch.Tensor:
    d = feats.shape[1]
    cov = torch.zeros(d, d, dtype=torch.double)  # expect: precision
    centered = feats - feats.mean(0, keepdim=True)
    cov += (centered.T @ centered).to(cov.dtype) / (feats.shape[0] - 1)
    return cov.float()  # ok

def build_mel_filterbank(n_fft: int, n_mels: int, sr: int) -> torch.Tensor:
    torch.set_default_dtype(torch.float64)  # expect: precision
    window = torch.hann_window(n_fft, dtype=torch.float64)  # expect: precision
    freqs = torch.linspace(0, sr / 2, n_fft // 2 + 1)
    mel_pts = torch.linspace(0, 2595 * np.log10(1 + sr / 2 / 700), n_mels + 2)
    hz = 700 * (10 ** (mel_pts / 2595) - 1)
    fb = torch.clamp(1 - (freqs[None, :] - hz[1:-1, None]).abs() / (hz[1] - hz[0]), min=0)
    torch.set_default_dtype(torch.float32)  # ok
    return (fb * window[: fb.shape[1]].sum()).to(torch.float32)  # ok

class FeatureNormalizer:
    """Computes mean/std in double precision for numerical stability on cuda."""  # ok

    def __init__(self, eps: float = 1e-6):
        self.eps = eps
        self.mean = None
        self.std = None

    def fit(self, feats: torch.Tensor) -> "FeatureNormalizer":
        x = feats.double()  # expect: precision
        self.mean = x.mean(0)
        self.std = x.std(0).clamp_min(self.eps)
        return self

    def transform(self, feats: torch.Tensor) -> torch.Tensor:
        if feats.dtype == torch.float64:  # ok
            feats = feats.float()  # ok
        return (feats - self.mean.float()) / self.std.float()

class NpzDataset(Dataset):
    def __init__(self, path: str, dtype: str = "fp32"):
        data = np.load(path)
        self.x = torch.as_tensor(data["x"], dtype=DTYPE_MAP[dtype])  # ok
        self.y = torch.as_tensor(data["y"]).long()  # ok

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        return {"x": self.x[i], "y": self.y[i]}

def pairwise_distances(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if cp is not None and torch.cuda.is_available():  # expect: runtime
        ga, gb = cp.asarray(a), cp.asarray(b)
        return cp.asnumpy(cp.sqrt(((ga[:, None] - gb[None]) ** 2).sum(-1)))
    return np.sqrt(((a[:, None] - b[None]) ** 2).sum(-1))

def legacy_one_hot(labels: torch.Tensor, num_classes: int) -> torch.Tensor:
    out = torch.cuda.FloatTensor(labels.size(0), num_classes).zero_()  # expect: runtime
    return out.scatter_(1, labels.unsqueeze(1).cuda(), 1.0)  # expect: device

def to_device(batch: Dict[str, torch.Tensor], device="cuda") -> Dict[str, torch.Tensor]:  # expect: device
    return {k: v.to(device, non_blocking=True) for k, v in batch.items()}  # ok

class CudaPrefetcher:
    """Overlaps host-to-device copies with compute (pattern from NVIDIA's apex examples)."""  # ok

    def __init__(self, loader):
        self.loader = iter(loader)
        self.device = torch.device("cuda")  # expect: device
        self.stream = torch.cuda.Stream()  # expect: runtime
        self._preload()

    def _preload(self):
        try:
            self.next_batch = next(self.loader)
        except StopIteration:
            self.next_batch = None
            return
        with torch.cuda.stream(self.stream):  # expect: runtime
            self.next_batch = {k: v.to(self.device, non_blocking=True) for k, v in self.next_batch.items()}  # ok

    def next(self):
        torch.cuda.current_stream().wait_stream(self.stream)  # expect: runtime
        batch = self.next_batch
        self._preload()
        logger.debug("prefetched batch onto cuda stream")  # ok
        return batch
