"""Loss and post-processing heads for a DETR-style detector.

The reference numbers were produced on CUDA devices, but nothing in this
module is tied to a particular backend.
"""
from __future__ import annotations

from typing import Dict, List

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn


def box_cxcywh_to_xyxy(x: torch.Tensor) -> torch.Tensor:
    cx, cy, w, h = x.unbind(-1)
    return torch.stack([cx - 0.5 * w, cy - 0.5 * h, cx + 0.5 * w, cy + 0.5 * h], dim=-1)


class SetCriterionLite(nn.Module):
    """Classification part of the Hungarian set criterion."""

    def __init__(self, num_classes: int, eos_coef: float = 0.1):
        super().__init__()
        self.num_classes = num_classes
        empty_weight = torch.ones(num_classes + 1)
        empty_weight[-1] = eos_coef
        self.register_buffer("empty_weight", empty_weight)

    def forward(
        self,
        logits: torch.Tensor,
        target_classes: torch.Tensor,
        matched: torch.Tensor,
    ) -> Dict[str, torch.Tensor]:
        # `matched` is a bool mask [B, Q]: True where a query was assigned a target
        matched_logits = logits[matched]  # expect: compilation
        matched_targets = target_classes[matched]  # expect: compilation
        loss_ce = F.cross_entropy(matched_logits, matched_targets, self.empty_weight)
        present = torch.unique(matched_targets)  # expect: compilation
        # cardinality error keeps static shapes
        card_pred = (logits.argmax(-1) != self.num_classes).sum(1)  # ok
        unmatched = logits.masked_fill(matched.unsqueeze(-1), 0.0)  # ok
        return {
            "loss_ce": loss_ce,
            "classes_present": present.numel(),
            "cardinality": card_pred.float().mean(),
            "unmatched_logit_mass": unmatched.abs().mean(),
        }


class PostProcess(nn.Module):
    """Turn raw model outputs into per-image detections."""

    def __init__(self, threshold: float = 0.7):
        super().__init__()
        self.threshold = threshold

    @torch.no_grad()
    def forward(self, outputs: Dict[str, torch.Tensor]):
        prob = outputs["pred_logits"].softmax(-1)[..., :-1]
        scores, labels = prob.max(-1)
        keep = torch.nonzero(scores > self.threshold, as_tuple=False)  # expect: compilation
        kept_scores = torch.masked_select(scores, scores > self.threshold)  # expect: compilation
        boxes = box_cxcywh_to_xyxy(outputs["pred_boxes"])
        # static-shape alternative used by the export path
        padded_scores = torch.where(scores > self.threshold, scores, torch.zeros_like(scores))  # ok
        return keep, kept_scores, labels, boxes, padded_scores


def filter_detections_for_export(detections: List[dict], threshold: float) -> List[dict]:
    """Host-side filtering after the model has run; tensors are moved to the CPU first."""
    out = []
    for det in detections:
        scores = det["scores"].detach().cpu()
        boxes = det["boxes"].detach().cpu()
        mask = scores > threshold
        out.append({"scores": scores[mask], "boxes": boxes[mask]})  # ok
    return out


def class_histogram(dataset_labels: List[torch.Tensor]) -> Dict[int, int]:
    """Count instances per class over the whole training annotation set."""
    all_labels = torch.cat(dataset_labels)
    classes, counts = torch.unique(all_labels, return_counts=True)  # may: compilation
    return dict(zip(classes.tolist(), counts.tolist()))


def nonempty_mask_indices(masks: np.ndarray) -> np.ndarray:
    return np.nonzero(masks.any(axis=(1, 2)))[0]  # ok
