"""Numerical helpers: masks, stable log-sum-exp and metric accumulation."""
import math

import numpy as np
import torch

HALF_NEG_INF = torch.finfo(torch.float16).min  # expect: precision
FP32_NEG_INF = torch.finfo(torch.float32).min  # ok


def make_causal_mask(seq_len: int, device, dtype=torch.float16):  # may: precision
    mask = torch.full((seq_len, seq_len), torch.finfo(torch.float16).min, device=device, dtype=dtype)  # expect: precision
    return torch.triu(mask, diagonal=1)


def make_padding_mask(attention_mask: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    inverted = 1.0 - attention_mask[:, None, None, :].to(dtype)
    return inverted.masked_fill(inverted.bool(), torch.finfo(dtype).min)  # may: precision


class RunningMoments:
    """Welford accumulator; kept in float64 on the host for exact long-run statistics."""

    def __init__(self):
        self.n = 0
        self.mean = np.zeros((), dtype=np.float64)  # ok
        self.m2 = np.zeros((), dtype=np.float64)  # ok

    def update(self, x: torch.Tensor) -> None:
        values = x.detach().cpu().double().numpy().ravel()  # ok
        for v in values:
            self.n += 1
            delta = v - self.mean
            self.mean += delta / self.n
            self.m2 += delta * (v - self.mean)

    @property
    def std(self) -> float:
        return math.sqrt(self.m2 / max(self.n - 1, 1))


def check_dtype(t: torch.Tensor) -> None:
    if t.dtype == torch.float64:  # ok
        raise TypeError("float64 tensors are not supported by the device kernels")


def kahan_sum_on_device(x: torch.Tensor) -> torch.Tensor:
    acc = torch.zeros((), dtype=torch.float64, device=x.device)  # expect: precision
    return acc + x.to(torch.float64).sum()  # expect: precision


def to_double_model(model: torch.nn.Module) -> torch.nn.Module:
    # gradient checking needs double precision
    return model.double()  # expect: precision
