# target: xla
"""PointRend-style mask refinement head."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def point_sample(inputs: torch.Tensor, point_coords: torch.Tensor, **kwargs) -> torch.Tensor:
    add_dim = False
    if point_coords.dim() == 3:
        add_dim = True
        point_coords = point_coords.unsqueeze(2)
    output = F.grid_sample(inputs, 2.0 * point_coords - 1.0, **kwargs)  # expect: compilation
    if add_dim:
        output = output.squeeze(3)
    return output


class PointHead(nn.Module):
    def __init__(self, in_channels: int, num_classes: int, num_points: int = 196, upsample_mode: str = "bilinear"):
        super().__init__()
        self.num_points = num_points
        self.upsample_mode = upsample_mode
        self.fc = nn.Conv1d(in_channels + num_classes, num_classes, 1)
        self.refine = nn.Upsample(scale_factor=2, mode="bicubic", align_corners=False)  # expect: compilation

    def forward(self, coarse_logits: torch.Tensor, features: torch.Tensor) -> torch.Tensor:
        up = F.interpolate(coarse_logits, scale_factor=2, mode="bilinear", align_corners=False)  # expect: compilation
        up_nearest = F.interpolate(coarse_logits, scale_factor=2, mode="nearest")  # ok
        up_cfg = F.interpolate(coarse_logits, scale_factor=2, mode=self.upsample_mode)  # may: compilation
        top2 = up.topk(2, dim=1).values
        uncertainty = -(top2[:, 0] - top2[:, 1]).abs()
        n, _, h, w = up.shape
        idx = uncertainty.view(n, -1).topk(self.num_points, dim=1).indices
        coords = torch.stack([(idx % w).float() / w, (idx // w).float() / h], dim=-1)
        fine = point_sample(features, coords, align_corners=False)
        coarse = point_sample(up, coords, align_corners=False)
        logits = self.fc(torch.cat([fine, coarse], dim=1))
        confident = up.masked_select(uncertainty.unsqueeze(1) > -0.1)  # expect: compilation
        return logits, up_nearest, up_cfg, confident
