import torch
import torch._dynamo
import torch.nn as nn
import torch.nn.functional as F
from torchvision.ops import batched_nms

torch._dynamo.config.automatic_dynamic_shapes = True  # expect: compilation
torch._dynamo.config.cache_size_limit = 64  # may: compilation


class DetectionHead(nn.Module):
    def __init__(self, in_ch=256, num_classes=80, score_thresh=0.05):
        super().__init__()
        self.cls = nn.Conv2d(in_ch, num_classes, 3, padding=1)
        self.box = nn.Conv2d(in_ch, 4, 3, padding=1)
        self.score_thresh = score_thresh

    def forward(self, feats):
        logits = self.cls(feats).flatten(2).transpose(1, 2)  # [B, HW, C]
        boxes = self.box(feats).flatten(2).transpose(1, 2)  # [B, HW, 4]
        scores = logits.sigmoid()
        keep = scores.max(-1).values > self.score_thresh
        idx = torch.nonzero(keep, as_tuple=False)  # expect: compilation
        kept_scores = torch.masked_select(scores.max(-1).values, keep)  # expect: compilation
        kept_boxes = boxes[keep]  # expect: compilation
        labels = scores.argmax(-1)[keep]  # expect: compilation
        present = labels.unique()  # expect: compilation
        return idx, kept_scores, kept_boxes, labels, present


class FocalLossHead(nn.Module):
    def __init__(self, alpha=0.25, gamma=2.0):
        super().__init__()
        self.alpha, self.gamma = alpha, gamma

    def forward(self, logits, targets, valid):
        p = logits.sigmoid()
        ce = F.binary_cross_entropy_with_logits(logits, targets, reduction="none")
        p_t = torch.where(targets > 0, p, 1 - p)  # ok
        alpha_t = torch.where(targets > 0, self.alpha, 1 - self.alpha)  # ok
        loss = ce * alpha_t * (1 - p_t) ** self.gamma
        loss = loss * valid.unsqueeze(-1).float()  # ok
        return loss.sum() / valid.sum().clamp(min=1)


class SparseRouter(nn.Module):
    def __init__(self, dim=512, experts=8):
        super().__init__()
        self.gate = nn.Linear(dim, experts)
        self.experts = nn.ModuleList(nn.Linear(dim, dim) for _ in range(experts))

    def forward(self, x):
        choice = self.gate(x).argmax(-1)
        out = torch.zeros_like(x)
        for e, expert in enumerate(self.experts):
            rows = torch.where(choice == e)[0]  # may: compilation
            out[rows] = expert(x[rows])  # may: compilation
        return out


def postprocess(idx, scores, boxes, labels, iou=0.5):
    # runs on host after .cpu(): dynamic shapes are fine here
    keep = batched_nms(boxes, scores, labels, iou)  # ok
    confident = scores[scores > 0.3]  # ok
    return keep, confident, torch.unique(labels)  # ok
