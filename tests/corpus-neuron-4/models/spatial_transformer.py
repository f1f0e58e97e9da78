"""Spatial transformer network and a deformable sampling block.

Based on the PyTorch STN tutorial; the deformable block follows the
multi-scale deformable attention reference implementation (pure PyTorch path,
no custom CUDA op).
"""
import numpy as np
import torch
import torch.nn.functional as F
from torch import nn


class STN(nn.Module):
    def __init__(self, num_classes: int = 10):
        super().__init__()
        self.localization = nn.Sequential(
            nn.Conv2d(1, 8, kernel_size=7),
            nn.MaxPool2d(2, stride=2),
            nn.ReLU(True),
            nn.Conv2d(8, 10, kernel_size=5),
            nn.MaxPool2d(2, stride=2),
            nn.ReLU(True),
        )
        self.fc_loc = nn.Sequential(nn.Linear(10 * 3 * 3, 32), nn.ReLU(True), nn.Linear(32, 3 * 2))
        self.fc_loc[2].weight.data.zero_()
        self.fc_loc[2].bias.data.copy_(torch.tensor([1, 0, 0, 0, 1, 0], dtype=torch.float))
        self.classifier = nn.Sequential(nn.Flatten(), nn.Linear(28 * 28, num_classes))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        theta = self.fc_loc(self.localization(x).flatten(1)).view(-1, 2, 3)
        grid = F.affine_grid(theta, x.size(), align_corners=False)  # may: compilation
        x = F.grid_sample(x, grid, mode="bilinear", padding_mode="zeros", align_corners=False)  # expect: compilation
        return self.classifier(x)


class DeformableSampler(nn.Module):
    """Single-scale deformable sampling (reference path)."""

    def __init__(self, dim: int = 256, n_points: int = 4):
        super().__init__()
        self.n_points = n_points
        self.offsets = nn.Linear(dim, n_points * 2)
        self.weights = nn.Linear(dim, n_points)
        self.out = nn.Linear(dim, dim)

    def forward(self, query: torch.Tensor, value: torch.Tensor, ref_points: torch.Tensor) -> torch.Tensor:
        # query [B, Q, C]; value [B, C, H, W]; ref_points [B, Q, 2] in [0, 1]
        b, q, _ = query.shape
        # offsets are accumulated in double precision to match the reference numerics
        ref = ref_points.to(device=value.device, dtype=torch.float64)  # expect: precision
        off = self.offsets(query).view(b, q, self.n_points, 2).to(ref.dtype)
        loc = (ref[:, :, None, :] + off / value.shape[-1]).to(value.dtype)
        grid = loc * 2.0 - 1.0
        sampled = torch.nn.functional.grid_sample(value, grid, mode="bilinear", padding_mode="zeros", align_corners=False)  # expect: compilation
        attn = self.weights(query).softmax(-1)
        out = (sampled * attn[:, None]).sum(-1).transpose(1, 2)
        return self.out(out)


def check_against_reference(module: nn.Module, inputs, ref_out: np.ndarray, rtol: float = 1e-5) -> None:
    """Compare against numbers dumped from the CUDA reference run."""
    out = module(*inputs).detach().cpu().to(torch.float64).numpy()  # ok
    np.testing.assert_allclose(out, ref_out.astype(np.float64), rtol=rtol)  # ok
