# target: xla
"""Self-attention used by the XLA ViT port."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel  # may: kernels

_FAST_BACKENDS = [SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION]  # expect: kernels


def configure():
    torch.backends.cuda.enable_flash_sdp(True)  # expect: kernels


class SelfAttention(nn.Module):
    def __init__(self, dim: int, heads: int, causal: bool = False):
        super().__init__()
        self.heads = heads
        self.causal = causal
        self.qkv = nn.Linear(dim, dim * 3)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor, key_padding_mask: torch.Tensor = None) -> torch.Tensor:
        b, t, c = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.heads, c // self.heads).permute(2, 0, 3, 1, 4)
        attn_mask = None
        if key_padding_mask is not None:
            attn_mask = ~key_padding_mask[:, None, None, :]  # ok
        with sdpa_kernel(_FAST_BACKENDS):  # expect: kernels
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask, is_causal=self.causal)  # ok
        out = out.transpose(1, 2).reshape(b, t, c)
        if key_padding_mask is not None:
            out = out.masked_fill(key_padding_mask[:, :, None], 0.0)  # ok
        return self.proj(out)
