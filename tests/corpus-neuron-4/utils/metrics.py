"""Evaluation metrics. Everything here runs on the host after predictions
have been gathered; float64 accumulation keeps the numbers reproducible
across devices.
"""
from typing import Dict

import numpy as np
import torch


def accuracy(preds: torch.Tensor, labels: torch.Tensor) -> float:
    preds = preds.detach().cpu()
    labels = labels.detach().cpu()
    correct = (preds == labels).to(torch.float64).sum()  # ok
    return float(correct / labels.numel())


def mean_iou(pred: torch.Tensor, target: torch.Tensor, num_classes: int, ignore_index: int = 255) -> float:
    pred = pred.detach().cpu().numpy().ravel()
    target = target.detach().cpu().numpy().ravel()
    valid = target != ignore_index
    pred = pred[valid]  # ok
    target = target[valid]  # ok
    hist = np.bincount(num_classes * target + pred, minlength=num_classes**2).reshape(num_classes, num_classes)
    hist = hist.astype(np.float64)  # ok
    iou = np.diag(hist) / (hist.sum(0) + hist.sum(1) - np.diag(hist) + 1e-10)
    return float(np.nanmean(iou))


def label_distribution(labels: torch.Tensor) -> Dict[int, int]:
    labels = labels.detach().cpu()
    classes, counts = torch.unique(labels, return_counts=True)  # may: compilation
    return dict(zip(classes.tolist(), counts.tolist()))


def count_background(labels: torch.Tensor) -> int:
    labels = labels.detach().cpu()
    return torch.nonzero(labels == 0).size(0)  # may: compilation


def expected_calibration_error(probs: torch.Tensor, labels: torch.Tensor, n_bins: int = 15) -> float:
    probs = probs.detach().cpu().double()  # ok
    labels = labels.detach().cpu()
    conf, pred = probs.max(-1)
    bins = torch.linspace(0, 1, n_bins + 1, dtype=torch.float64)  # ok
    ece = torch.zeros((), dtype=torch.float64)  # ok
    for lo, hi in zip(bins[:-1], bins[1:]):
        in_bin = (conf > lo) & (conf <= hi)
        if in_bin.any():
            acc = (pred[in_bin] == labels[in_bin]).double().mean()  # ok
            ece += in_bin.double().mean() * (conf[in_bin].mean() - acc).abs()  # ok
    return float(ece)


def assert_close_to_reference(value: torch.Tensor, reference: float, tol: float = 1e-6) -> None:
    if value.dtype == torch.float64:  # ok
        tol = tol / 100
    assert abs(value.detach().cpu().item() - reference) < tol
