# Copyright (c) 2023, Tri Dao.

import torch
import torch.nn as nn
from einops import rearrange

from flash_attn.bert_padding import pad_input, unpad_input  # expect-one(flash-attn-pkg): kernels|dependencies

try:
    from flash_attn import flash_attn_kvpacked_func, flash_attn_qkvpacked_func, flash_attn_varlen_qkvpacked_func  # expect-one(flash-attn-pkg): kernels|dependencies
except ImportError:
    flash_attn_varlen_qkvpacked_func = None
    flash_attn_qkvpacked_func, flash_attn_kvpacked_func = None, None


class FlashSelfAttention(nn.Module):
    """Implement the scaled dot product attention with softmax."""

    def __init__(self, causal=False, softmax_scale=None, attention_dropout=0.0, window_size=(-1, -1), deterministic=False):
        super().__init__()
        assert flash_attn_varlen_qkvpacked_func is not None, "FlashAttention is not installed"
        assert flash_attn_qkvpacked_func is not None, "FlashAttention is not installed"
        self.causal = causal
        self.softmax_scale = softmax_scale
        self.drop = nn.Dropout(attention_dropout)
        self.window_size = window_size
        self.deterministic = deterministic

    def forward(self, qkv, causal=None, cu_seqlens=None, max_seqlen=None):
        assert qkv.dtype in [torch.float16, torch.bfloat16]  # may: precision
        assert qkv.is_cuda  # may: device
        causal = self.causal if causal is None else causal
        if cu_seqlens is not None:
            return flash_attn_varlen_qkvpacked_func(
                qkv, cu_seqlens, max_seqlen, self.drop.p if self.training else 0.0,
                softmax_scale=self.softmax_scale, causal=causal,
            )
        return flash_attn_qkvpacked_func(
            qkv, self.drop.p if self.training else 0.0, softmax_scale=self.softmax_scale,
            causal=causal, window_size=self.window_size, deterministic=self.deterministic,
        )


class MHA(nn.Module):
    def __init__(self, embed_dim, num_heads, causal=False, use_flash_attn=True):
        super().__init__()
        self.embed_dim = embed_dim
        self.num_heads = num_heads
        self.head_dim = embed_dim // num_heads
        self.Wqkv = nn.Linear(embed_dim, 3 * embed_dim)
        self.out_proj = nn.Linear(embed_dim, embed_dim)
        self.inner_attn = FlashSelfAttention(causal=causal) if use_flash_attn else None

    def forward(self, x, key_padding_mask=None):
        batch, seqlen = x.shape[:2]
        qkv = rearrange(self.Wqkv(x), "... (three h d) -> ... three h d", three=3, d=self.head_dim)
        if key_padding_mask is not None:
            qkv_unpad, indices, cu_seqlens, max_seqlen = unpad_input(qkv, key_padding_mask)
            out = self.inner_attn(qkv_unpad, cu_seqlens=cu_seqlens, max_seqlen=max_seqlen)
            out = pad_input(out, indices, batch, seqlen)
        else:
            out = self.inner_attn(qkv)
        return self.out_proj(rearrange(out, "... h d -> ... (h d)"))
