# Copyright (c) Facebook, Inc. and its affiliates.
"""A trimmed mask-refinement ROI head in the style of detectron2's ``StandardROIHeads``."""
import logging
from typing import Dict, List, Tuple

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

logger = logging.getLogger(__name__)


def sample_proposals(
    matched_idxs: torch.Tensor, matched_labels: torch.Tensor, gt_classes: torch.Tensor, num_classes: int
) -> torch.Tensor:
    """Assign classification labels to proposals (label ``num_classes`` is background)."""
    has_gt = gt_classes.numel() > 0
    if has_gt:
        gt_classes = gt_classes[matched_idxs]
        # Label unmatched proposals (0 label from matcher) as background (label=num_classes)
        gt_classes[matched_labels == 0] = num_classes
        # Label ignore proposals (-1 label)
        gt_classes[matched_labels == -1] = -1
    else:
        gt_classes = torch.zeros_like(matched_idxs) + num_classes
    return gt_classes


class MaskRefineHead(nn.Module):
    """Refines coarse instance masks with a point-sampled feature lookup."""

    def __init__(self, in_channels: int, num_classes: int, conv_dims: int = 256, score_thresh: float = 0.05):
        super().__init__()
        self.score_thresh = score_thresh
        self.num_classes = num_classes
        self.conv1 = nn.Conv2d(in_channels, conv_dims, kernel_size=3, padding=1)
        self.conv2 = nn.Conv2d(conv_dims, conv_dims, kernel_size=3, padding=1)
        self.predictor = nn.Conv2d(conv_dims, num_classes, kernel_size=1)
        self.cls_score = nn.Linear(conv_dims, num_classes + 1)

    def forward(
        self,
        features: torch.Tensor,
        boxes: torch.Tensor,
        scores: torch.Tensor,
        point_grid: torch.Tensor,
        valid: torch.Tensor,
    ) -> Tuple[torch.Tensor, Dict[str, torch.Tensor]]:
        # keep only confident proposals
        keep = torch.nonzero(scores > self.score_thresh).squeeze(1)  # expect: compilation
        boxes = boxes[keep]  # may: compilation
        fg_mask = scores > self.score_thresh
        fg_scores = scores[fg_mask]  # expect: compilation

        x = F.relu(self.conv1(features))
        x = F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=False)  # expect: compilation
        x = F.relu(self.conv2(x))
        point_feats = F.grid_sample(x, point_grid, padding_mode="border", align_corners=False)  # expect: compilation

        logits = self.predictor(point_feats)
        pred_classes = self.cls_score(point_feats.mean(dim=(2, 3))).argmax(dim=1)
        present = torch.unique(pred_classes, sorted=True)  # expect: compilation

        # additive mask for padded points
        attn_bias = torch.zeros_like(logits).masked_fill(~valid, torch.finfo(torch.float16).min)  # expect: precision
        neg_inf = torch.finfo(logits.dtype).min  # ok
        logits = (logits + attn_bias).clamp_min(neg_inf)

        point_ious = torch.masked_select(logits.sigmoid().amax(dim=1), valid)  # expect: compilation
        return logits, {"boxes": boxes, "scores": fg_scores, "classes": present, "ious": point_ious}


def boxes_to_coco_json(boxes: torch.Tensor, scores: torch.Tensor, image_id: int) -> List[dict]:
    """Convert boxes to COCO json; the computation happens on the host in float64."""
    boxes_np = boxes.detach().cpu().numpy().astype(np.float64)  # ok
    areas = (boxes_np[:, 2] - boxes_np[:, 0]) * (boxes_np[:, 3] - boxes_np[:, 1])
    labels = np.unique(boxes_np[:, 0].round())  # ok
    logger.debug("converting %d boxes (%d distinct x0 values)", len(boxes_np), len(labels))
    return [
        {"image_id": image_id, "bbox": b.tolist(), "area": float(a), "score": float(s)}
        for b, a, s in zip(boxes_np, areas, scores.cpu().tolist())
    ]


def check_box_dtype(t: torch.Tensor) -> None:
    if t.dtype == torch.float64:  # ok
        raise TypeError("expected float32 boxes, got float64 (did you forget .float()?)")  # ok
