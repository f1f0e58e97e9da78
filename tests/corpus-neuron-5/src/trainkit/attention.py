"""Attention with a preferred list of fused SDPA backends."""
from __future__ import annotations

import contextlib
from typing import List, Optional

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel  # may: kernels

PREFERRED_BACKENDS: List[SDPBackend] = [
    SDPBackend.CUDNN_ATTENTION,
    SDPBackend.FLASH_ATTENTION,
    SDPBackend.EFFICIENT_ATTENTION,
    SDPBackend.MATH,
]  # expect: kernels

MATH_ONLY = [SDPBackend.MATH]  # ok


def attention(q, k, v, mask: Optional[torch.Tensor] = None, dropout_p: float = 0.0, backends: Optional[List[SDPBackend]] = None):
    backends = backends or PREFERRED_BACKENDS
    with sdpa_kernel(backends):  # expect: kernels
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=dropout_p)  # ok


def reference_attention(q, k, v):
    with sdpa_kernel(MATH_ONLY):  # may: kernels
        return F.scaled_dot_product_attention(q, k, v)


def configure_backends(enable_flash: bool = True, enable_mem_efficient: bool = True) -> None:
    torch.backends.cuda.enable_flash_sdp(enable_flash)  # expect: kernels
    torch.backends.cuda.enable_mem_efficient_sdp(enable_mem_efficient)  # expect: kernels
    torch.backends.cuda.enable_math_sdp(True)  # may: kernels


@contextlib.contextmanager
def legacy_flash_only():
    with torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=False, enable_mem_efficient=False):  # expect: kernels
        yield


class MultiHeadAttention(nn.Module):
    def __init__(self, dim: int, num_heads: int, causal: bool = True):
        super().__init__()
        self.num_heads = num_heads
        self.causal = causal
        self.qkv = nn.Linear(dim, 3 * dim, bias=False)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, c = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.num_heads, c // self.num_heads).permute(2, 0, 3, 1, 4)
        out = F.scaled_dot_product_attention(q, k, v, is_causal=self.causal)  # ok
        return self.proj(out.transpose(1, 2).reshape(b, t, c))
