"""Encoder self-attention with rotary embeddings and an HF-style additive attention mask."""
import math
from typing import Optional

import torch
import torch.nn as nn
import torch.nn.functional as F


def rotary_table(dim: int, positions: torch.Tensor, theta: float = 10000.0) -> torch.Tensor:
    # float64 for the frequency table, as in the reference implementation
    scale = torch.arange(0, dim, 2, dtype=torch.float64, device=positions.device) / dim  # expect: precision
    omega = 1.0 / (theta ** scale)
    angles = torch.einsum("...n,d->...nd", positions.to(torch.float64), omega)  # expect: precision
    return torch.stack([angles.cos(), angles.sin()], dim=-1).float()


def apply_rotary(x: torch.Tensor, table: torch.Tensor) -> torch.Tensor:
    x1, x2 = x[..., 0::2], x[..., 1::2]
    cos, sin = table[..., 0], table[..., 1]
    return torch.stack([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1).flatten(-2)


def extended_attention_mask(attention_mask: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """(B, T) 1/0 mask -> (B, 1, 1, T) additive mask."""
    ext = attention_mask[:, None, None, :].to(dtype)
    return (1.0 - ext) * torch.finfo(torch.float16).min  # expect: precision


class SelfAttention(nn.Module):
    def __init__(self, hidden: int = 768, heads: int = 12, dropout: float = 0.1, use_sdpa: bool = True):
        super().__init__()
        self.heads, self.head_dim = heads, hidden // heads
        self.qkv = nn.Linear(hidden, 3 * hidden)
        self.out = nn.Linear(hidden, hidden)
        self.dropout = dropout
        self.use_sdpa = use_sdpa

    def forward(self, x: torch.Tensor, attention_mask: Optional[torch.Tensor] = None) -> torch.Tensor:
        if x.dtype == torch.float64:  # ok
            x = x.float()
        b, t, _ = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.heads, self.head_dim).unbind(2)
        q, k, v = (y.transpose(1, 2) for y in (q, k, v))
        table = rotary_table(self.head_dim, torch.arange(t, device=x.device))
        q, k = apply_rotary(q, table), apply_rotary(k, table)

        if self.use_sdpa:
            mask = None if attention_mask is None else extended_attention_mask(attention_mask, q.dtype)
            with torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=False, enable_mem_efficient=True):  # expect: kernels
                out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=self.dropout if self.training else 0.0)
        else:
            scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)
            if attention_mask is not None:
                scores = scores.masked_fill(attention_mask[:, None, None, :] == 0, torch.finfo(torch.float32).min)  # expect: precision
            out = F.dropout(scores.softmax(-1), self.dropout, self.training) @ v
        return self.out(out.transpose(1, 2).reshape(b, t, -1))
