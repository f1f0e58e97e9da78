# target: neuron
"""Transformer encoder with padding masks, ported from the fp16 GPU training code."""
import math
from typing import List

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pad_sequence


class MaskedSelfAttention(nn.Module):
    def __init__(self, dim: int, heads: int):
        super().__init__()
        self.heads = heads
        self.head_dim = dim // heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        b, t, c = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.heads, self.head_dim).unbind(2)
        q, k, v = (y.transpose(1, 2) for y in (q, k, v))
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)
        mask_value = torch.finfo(torch.float16).min  # expect: precision
        scores = scores.masked_fill(~attention_mask[:, None, None, :], mask_value)  # ok
        probs = scores.softmax(-1)
        return self.out((probs @ v).transpose(1, 2).reshape(b, t, c))


class DtypeAwareAttention(MaskedSelfAttention):
    def forward(self, x: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        b, t, c = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.heads, self.head_dim).unbind(2)
        q, k, v = (y.transpose(1, 2) for y in (q, k, v))
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)
        scores = scores.masked_fill(~attention_mask[:, None, None, :], torch.finfo(scores.dtype).min)  # ok
        return self.out((scores.softmax(-1) @ v).transpose(1, 2).reshape(b, t, c))


class PackedEncoder(nn.Module):
    def __init__(self, vocab: int, dim: int = 512, heads: int = 8, layers: int = 6):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim, padding_idx=0)
        self.layers = nn.ModuleList([MaskedSelfAttention(dim, heads) for _ in range(layers)])
        self.head = nn.Linear(dim, 2)

    def forward(self, tokens: torch.Tensor, pad_mask: torch.Tensor) -> torch.Tensor:
        x = self.embed(tokens)
        for layer in self.layers:
            x = x + layer(x, ~pad_mask)
        valid = x[~pad_mask]  # expect: compilation
        lengths = (~pad_mask).sum(-1)
        distinct_lengths = torch.unique(lengths)  # expect: compilation
        pooled = (x * (~pad_mask).unsqueeze(-1)).sum(1) / lengths.clamp(min=1).unsqueeze(-1)  # ok
        return self.head(pooled), valid, distinct_lengths


def collate(batch: List[dict]) -> dict:
    ids = pad_sequence([b["input_ids"] for b in batch], batch_first=True, padding_value=0)  # expect: compilation
    return {"tokens": ids, "pad_mask": ids == 0, "labels": torch.tensor([b["label"] for b in batch])}


def collate_fixed(batch: List[dict], max_len: int = 256) -> dict:
    ids = torch.stack([F.pad(b["input_ids"][:max_len], (0, max_len - min(len(b["input_ids"]), max_len))) for b in batch])  # ok
    return {"tokens": ids, "pad_mask": ids == 0, "labels": torch.tensor([b["label"] for b in batch])}
