# Copyright (c) 2023, Tri Dao.
import math

import torch
import torch.nn as nn
from einops import rearrange

from flash_attn.flash_attn_interface import flash_attn_qkvpacked_func  # expect-one(flash-attn-package): kernels|dependencies

try:
    from flash_attn.ops.fused_dense import FusedDense  # expect-one(flash-attn-package): kernels|dependencies
except ImportError:
    FusedDense = None


class FlashSelfAttention(nn.Module):
    def __init__(self, causal=False, softmax_scale=None, attention_dropout=0.0):
        super().__init__()
        self.causal = causal
        self.softmax_scale = softmax_scale
        self.drop = nn.Dropout(attention_dropout)

    def forward(self, qkv, causal=None):
        causal = self.causal if causal is None else causal
        return flash_attn_qkvpacked_func(qkv, self.drop.p if self.training else 0.0, softmax_scale=self.softmax_scale, causal=causal)


class MHA(nn.Module):
    def __init__(self, embed_dim, num_heads, causal=False, dropout=0.0, fused_bias_fc=False):
        super().__init__()
        self.num_heads, self.head_dim = num_heads, embed_dim // num_heads
        linear_cls = FusedDense if fused_bias_fc and FusedDense is not None else nn.Linear
        self.Wqkv = linear_cls(embed_dim, 3 * embed_dim)
        self.inner_attn = FlashSelfAttention(causal=causal, softmax_scale=1.0 / math.sqrt(self.head_dim), attention_dropout=dropout)
        self.out_proj = linear_cls(embed_dim, embed_dim)

    def forward(self, x):
        qkv = rearrange(self.Wqkv(x), "b s (three h d) -> b s three h d", three=3, d=self.head_dim)
        return self.out_proj(rearrange(self.inner_attn(qkv), "b s h d -> b s (h d)"))
