"""Metrics. Accumulators live on the training device; reports are computed on the host."""
from __future__ import annotations

from typing import Dict, List

import numpy as np
import torch
import torch.distributed as dist


class RunningMean:
    def __init__(self, device: torch.device):
        self.device = device
        self.total = torch.zeros((), dtype=torch.float64, device=device)  # expect: precision
        self.count = torch.zeros((), dtype=torch.long, device=device)

    def update(self, value: torch.Tensor, n: int = 1) -> None:
        self.total += value.detach().double() * n  # expect: precision
        self.count += n

    def sync(self) -> None:
        if dist.is_available() and dist.is_initialized():
            dist.all_reduce(self.total)
            dist.all_reduce(self.count)

    def compute(self) -> float:
        return (self.total / self.count.clamp(min=1)).item()


def accuracy(logits: torch.Tensor, labels: torch.Tensor) -> float:
    preds = logits.argmax(-1).cpu().numpy()
    return float(np.mean(preds == labels.cpu().numpy()))


def check_dtype(t: torch.Tensor) -> None:
    if t.dtype == torch.float64:  # ok
        raise TypeError("expected float32 input, got float64")  # ok


def auc_host(scores: torch.Tensor, labels: torch.Tensor) -> float:
    s = scores.detach().cpu().double()  # ok
    y = labels.detach().cpu().to(torch.float64)  # ok
    order = torch.argsort(s, descending=True)
    y = y[order]
    tps = torch.cumsum(y, 0)
    fps = torch.cumsum(1 - y, 0)
    tpr = tps / tps[-1].clamp(min=1)
    fpr = fps / fps[-1].clamp(min=1)
    return float(torch.trapz(tpr, fpr))


def pearson(x: List[float], y: List[float]) -> float:
    xa = np.asarray(x, dtype=np.float64)  # ok
    ya = np.asarray(y, dtype="float64")  # ok
    return float(np.corrcoef(xa, ya)[0, 1])


def mean_ap_host(preds: List[Dict[str, torch.Tensor]]) -> float:
    scores = torch.cat([p["scores"].cpu() for p in preds]).to(dtype=torch.float64)  # ok
    hits = torch.cat([p["hits"].cpu() for p in preds]).to(dtype=torch.float64)  # ok
    order = torch.argsort(scores, descending=True)
    hits = hits[order]
    precision = torch.cumsum(hits, 0) / torch.arange(1, len(hits) + 1, dtype=torch.float64)  # ok
    return float((precision * hits).sum() / hits.sum().clamp(min=1))
