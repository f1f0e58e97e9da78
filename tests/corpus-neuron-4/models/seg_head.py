"""SegFormer-style all-MLP decode head plus an FPN top-down path.

Resizing of the input images happens on the host in the torchvision
transforms; only the decoder upsampling runs on the accelerator.
"""
from typing import List, Sequence

import torch
import torch.nn.functional as F
from torch import nn
from torchvision import transforms as T


class MLP(nn.Module):
    def __init__(self, in_dim: int, embed_dim: int):
        super().__init__()
        self.proj = nn.Linear(in_dim, embed_dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, c, h, w = x.shape
        x = self.proj(x.flatten(2).transpose(1, 2))
        return x.transpose(1, 2).reshape(b, -1, h, w)


class SegFormerHead(nn.Module):
    def __init__(self, in_channels: Sequence[int], embed_dim: int = 256, num_classes: int = 150):
        super().__init__()
        self.linear_c = nn.ModuleList([MLP(c, embed_dim) for c in in_channels])
        self.fuse = nn.Sequential(
            nn.Conv2d(embed_dim * len(in_channels), embed_dim, 1, bias=False),
            nn.BatchNorm2d(embed_dim),
            nn.ReLU(inplace=True),
        )
        self.dropout = nn.Dropout2d(0.1)
        self.classifier = nn.Conv2d(embed_dim, num_classes, 1)

    def forward(self, features: List[torch.Tensor]) -> torch.Tensor:
        target_size = features[0].shape[2:]
        outs = []
        for feat, mlp in zip(features, self.linear_c):
            x = mlp(feat)
            x = F.interpolate(x, size=target_size, mode="bilinear", align_corners=False)  # expect: compilation
            outs.append(x)
        fused = self.fuse(torch.cat(outs[::-1], dim=1))
        return self.classifier(self.dropout(fused))


class FPNTopDown(nn.Module):
    def __init__(self, channels: int = 256):
        super().__init__()
        self.smooth = nn.Conv2d(channels, channels, 3, padding=1)
        self.up = nn.Upsample(scale_factor=2, mode="bilinear", align_corners=True)  # expect: compilation

    def forward(self, c4: torch.Tensor, c3: torch.Tensor, c2: torch.Tensor) -> List[torch.Tensor]:
        p4 = c4
        p3 = c3 + F.interpolate(p4, scale_factor=2, mode="nearest")  # ok
        p2 = c2 + self.up(p3)
        return [self.smooth(p) for p in (p2, p3, p4)]


class SegmentationModel(nn.Module):
    def __init__(self, backbone: nn.Module, head: SegFormerHead):
        super().__init__()
        self.backbone = backbone
        self.head = head

    def forward(self, pixel_values: torch.Tensor) -> torch.Tensor:
        logits = self.head(self.backbone(pixel_values))
        return F.interpolate(logits, scale_factor=4.0, mode="bicubic", align_corners=False)  # expect: compilation


def build_eval_transforms(size: int = 512) -> T.Compose:
    return T.Compose(
        [
            T.Resize(size, interpolation=T.InterpolationMode.BICUBIC),  # ok
            T.CenterCrop(size),
            T.ToTensor(),
            T.Normalize(mean=(0.485, 0.456, 0.406), std=(0.229, 0.224, 0.225)),
        ]
    )


def upscale_for_visualisation(pred: torch.Tensor, size) -> torch.Tensor:
    """Resize a predicted map for the TensorBoard image grid (CPU only)."""
    pred = pred.detach().float().cpu()
    return F.interpolate(pred[None], size=size, mode="bilinear", align_corners=False)[0]  # may: compilation
