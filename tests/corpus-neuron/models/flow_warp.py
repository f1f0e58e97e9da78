"""Optical-flow warping (RAFT-style correlation lookup) and an FPN top-down path."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def coords_grid(batch: int, ht: int, wd: int, device) -> torch.Tensor:
    ys, xs = torch.meshgrid(torch.arange(ht, device=device), torch.arange(wd, device=device), indexing="ij")
    coords = torch.stack([xs, ys], dim=0).float()
    return coords[None].repeat(batch, 1, 1, 1)


def bilinear_sampler(img: torch.Tensor, coords: torch.Tensor) -> torch.Tensor:
    """Sample img (B, C, H, W) at pixel coords (B, H', W', 2)."""
    h, w = img.shape[-2:]
    xgrid, ygrid = coords.split([1, 1], dim=-1)
    xgrid = 2 * xgrid / (w - 1) - 1
    ygrid = 2 * ygrid / (h - 1) - 1
    grid = torch.cat([xgrid, ygrid], dim=-1)
    return F.grid_sample(img, grid, mode="bilinear", padding_mode="zeros", align_corners=True)  # expect: compilation


def warp(feature: torch.Tensor, flow: torch.Tensor) -> torch.Tensor:
    b, _, h, w = feature.shape
    coords = (coords_grid(b, h, w, feature.device) + flow).permute(0, 2, 3, 1)
    return bilinear_sampler(feature, coords)


class FPNTopDown(nn.Module):
    def __init__(self, c4: int = 1024, c5: int = 2048, out: int = 256):
        super().__init__()
        self.lateral4 = nn.Conv2d(c4, out, 1)
        self.lateral5 = nn.Conv2d(c5, out, 1)
        self.smooth = nn.Conv2d(out, out, 3, padding=1)
        self.up = nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False)  # expect: compilation

    def forward(self, c4: torch.Tensor, c5: torch.Tensor) -> torch.Tensor:
        p5 = self.lateral5(c5)
        p4 = self.smooth(self.lateral4(c4) + self.up(p5))
        return F.interpolate(p4, scale_factor=2.0, mode="bicubic", align_corners=False)  # expect: compilation
