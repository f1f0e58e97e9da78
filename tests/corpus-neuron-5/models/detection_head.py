"""Box head and RPN post-processing, kept inside the modules so export sees them."""
from __future__ import annotations

from typing import Dict, List

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torchvision.ops import batched_nms


class BoxHead(nn.Module):
    def __init__(self, in_channels: int, num_classes: int, score_thresh: float = 0.05,
                 nms_thresh: float = 0.5, detections_per_img: int = 100):
        super().__init__()
        self.cls_logits = nn.Linear(in_channels, num_classes)
        self.bbox_pred = nn.Linear(in_channels, num_classes * 4)
        self.num_classes = num_classes
        self.score_thresh = score_thresh
        self.nms_thresh = nms_thresh
        self.detections_per_img = detections_per_img

    def forward(self, features: torch.Tensor, proposals: torch.Tensor) -> Dict[str, torch.Tensor]:
        logits = self.cls_logits(features)
        deltas = self.bbox_pred(features).view(-1, self.num_classes, 4)
        scores = F.softmax(logits, dim=-1)[:, 1:]
        boxes = proposals[:, None, :] + deltas[:, 1:, :]
        labels = torch.arange(1, self.num_classes, device=scores.device).expand_as(scores)
        boxes = boxes.reshape(-1, 4)
        scores = scores.reshape(-1)
        labels = labels.reshape(-1)

        keep = scores > self.score_thresh
        boxes = boxes[keep]  # expect: compilation
        scores = scores[keep]  # expect: compilation
        labels = labels[keep]  # expect: compilation

        wh = boxes[:, 2:] - boxes[:, :2]
        too_small = (wh < 1e-2).any(dim=1)
        boxes = boxes[~too_small]  # expect: compilation
        scores = scores[~too_small]  # expect: compilation
        labels = labels[~too_small]  # expect: compilation

        keep_idx = batched_nms(boxes, scores, labels, self.nms_thresh)[: self.detections_per_img]  # may: compilation
        return {"boxes": boxes[keep_idx], "scores": scores[keep_idx], "labels": labels[keep_idx]}  # may: compilation


class RPNPostProcess(nn.Module):
    def __init__(self, pos_thresh: float = 0.7, neg_thresh: float = 0.3):
        super().__init__()
        self.pos_thresh = pos_thresh
        self.neg_thresh = neg_thresh

    def forward(self, objectness: torch.Tensor, anchors: torch.Tensor):
        # objectness: [N, A], anchors: [N, A, 4]
        prob = objectness.sigmoid()
        pos = torch.where(prob > self.pos_thresh)  # expect: compilation
        pos_anchors = anchors[pos]  # may: compilation
        batch_idx, anchor_idx = (prob < self.neg_thresh).nonzero(as_tuple=True)  # expect: compilation
        neg_anchors = anchors[batch_idx, anchor_idx]  # may: compilation
        clipped = torch.where(prob > 0.5, prob, torch.zeros_like(prob))  # ok
        weights = prob.masked_fill(prob < self.neg_thresh, 0.0)  # ok
        return pos_anchors, neg_anchors, clipped, weights


class InstanceEmbedding(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.proj = nn.Conv2d(dim, dim, 1)

    def forward(self, feats: torch.Tensor, instance_ids: torch.Tensor):
        emb = self.proj(feats).flatten(2).transpose(1, 2)  # [B, HW, C]
        ids = instance_ids.flatten(1)
        present = ids.unique(sorted=True)  # expect: compilation
        fg = emb.masked_select((ids > 0).unsqueeze(-1))  # expect: compilation
        counts = torch.bincount(ids.flatten())  # may: compilation
        centers = torch.stack([emb[ids == i].mean(0) for i in present])  # expect: compilation
        per_pixel = centers.repeat_interleave(counts[present], dim=0)  # may: compilation
        tiled = centers.repeat_interleave(4, dim=0)  # ok
        background = emb.masked_fill((ids == 0).unsqueeze(-1), 0.0)  # ok
        return fg, per_pixel, tiled, background


def postprocess_numpy(boxes: np.ndarray, scores: np.ndarray, labels: np.ndarray, thresh: float = 0.5) -> List[dict]:
    """Host-side filtering after the model has returned fixed-size outputs."""
    keep = scores > thresh
    boxes = boxes[keep]  # ok
    scores = scores[keep]  # ok
    labels = labels[keep]  # ok
    idx = np.nonzero(scores > 0.9)[0]  # ok
    classes = np.unique(labels)  # ok
    return [{"label": int(c), "boxes": boxes[labels == c], "confident": idx.tolist()} for c in classes]  # ok
