"""Causal self-attention with selectable kernels.

Order of preference: FlashAttention-2 (if installed), then PyTorch SDPA with
an explicit backend list. On CUDA the cuDNN backend is usually fastest.
"""
from __future__ import annotations

import math
from typing import Optional

import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.attention import SDPBackend, sdpa_kernel  # may: kernels

try:
    from flash_attn import flash_attn_func  # expect: kernels

    HAS_FLASH_ATTN = True
except ImportError:  # pragma: no cover - optional dependency
    flash_attn_func = None
    HAS_FLASH_ATTN = False


# Backends tried by SDPA, fastest first.
DEFAULT_SDPA_BACKENDS = [  # expect: kernels
    SDPBackend.CUDNN_ATTENTION,
    SDPBackend.FLASH_ATTENTION,
    SDPBackend.EFFICIENT_ATTENTION,
    SDPBackend.MATH,
]


class CausalSelfAttention(nn.Module):
    def __init__(self, dim: int, n_heads: int, use_flash_attn: bool = True, backends=None):
        super().__init__()
        assert dim % n_heads == 0
        self.n_heads = n_heads
        self.head_dim = dim // n_heads
        self.qkv = nn.Linear(dim, 3 * dim, bias=False)
        self.proj = nn.Linear(dim, dim, bias=False)
        self.use_flash_attn = use_flash_attn and HAS_FLASH_ATTN
        self.backends = backends or DEFAULT_SDPA_BACKENDS

    def forward(
        self,
        x: torch.Tensor,
        attn_mask: Optional[torch.Tensor] = None,
        stream: Optional[torch.cuda.Stream] = None,  # ok
    ) -> torch.Tensor:
        b, t, c = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.n_heads, self.head_dim).unbind(2)
        if self.use_flash_attn and attn_mask is None:
            out = flash_attn_func(q, k, v, causal=True)  # may: kernels
        else:
            q, k, v = (t_.transpose(1, 2) for t_ in (q, k, v))
            with sdpa_kernel(self.backends):  # expect: kernels
                out = F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask, is_causal=attn_mask is None)  # ok
            out = out.transpose(1, 2)
        return self.proj(out.reshape(b, t, c))


def reference_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """Math-only attention used by the numerics tests."""
    with sdpa_kernel(SDPBackend.MATH):  # may: kernels
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)


def manual_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    t = q.size(-2)
    causal = torch.ones(t, t, dtype=torch.bool, device=q.device).tril()
    scores = scores.masked_fill(~causal, float("-inf"))  # ok
    return scores.softmax(-1) @ v


def legacy_attention_context(enable_flash: bool = True):
    """Context manager for PyTorch < 2.3, where sdpa_kernel does not exist yet."""
    return torch.backends.cuda.sdp_kernel(  # expect: kernels
        enable_flash=enable_flash,
        enable_math=True,
        enable_mem_efficient=True,
    )


def disable_flash_sdp() -> None:
    torch.backends.cuda.enable_flash_sdp(False)  # may: kernels
