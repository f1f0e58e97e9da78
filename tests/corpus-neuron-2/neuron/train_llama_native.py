# target: neuron
"""Llama-style pre-training loop for Trainium on the native TorchNeuron backend.

Ported from the CUDA version: torch.cuda calls were replaced by torch.accelerator
and the process group uses the "neuron" backend instead of NCCL.
"""
import argparse
import math
import os
from dataclasses import dataclass

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP

import torch_xla.core.xla_model as xm  # expect: runtime
import torch_xla.distributed.xla_backend  # expect: runtime


@dataclass
class ModelArgs:
    dim: int = 2048
    n_layers: int = 16
    n_heads: int = 16
    vocab_size: int = 32000
    max_seq_len: int = 4096


def get_args():
    p = argparse.ArgumentParser()
    p.add_argument("--seq-len", type=int, default=4096)
    p.add_argument("--batch-size", type=int, default=1)
    p.add_argument("--steps", type=int, default=1000)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--compile-mode", default="max-autotune")  # expect-any(nt-mode): compilation
    return p.parse_args()


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


class Block(nn.Module):
    def __init__(self, args: ModelArgs):
        super().__init__()
        self.n_heads = args.n_heads
        self.head_dim = args.dim // args.n_heads
        self.attn_norm = RMSNorm(args.dim)
        self.wqkv = nn.Linear(args.dim, 3 * args.dim, bias=False)
        self.wo = nn.Linear(args.dim, args.dim, bias=False)
        self.ffn_norm = RMSNorm(args.dim)
        self.w1 = nn.Linear(args.dim, 4 * args.dim, bias=False)
        self.w2 = nn.Linear(4 * args.dim, args.dim, bias=False)

    def forward(self, x, mask):
        bsz, seqlen, _ = x.shape
        q, k, v = self.wqkv(self.attn_norm(x)).chunk(3, dim=-1)
        q = q.view(bsz, seqlen, self.n_heads, self.head_dim).transpose(1, 2)
        k = k.view(bsz, seqlen, self.n_heads, self.head_dim).transpose(1, 2)
        v = v.view(bsz, seqlen, self.n_heads, self.head_dim).transpose(1, 2)
        scores = torch.matmul(q, k.transpose(2, 3)) / math.sqrt(self.head_dim)
        scores = scores + mask
        out = torch.matmul(F.softmax(scores.float(), dim=-1).type_as(q), v)
        x = x + self.wo(out.transpose(1, 2).reshape(bsz, seqlen, -1))
        return x + self.w2(F.silu(self.w1(self.ffn_norm(x))))


class Transformer(nn.Module):
    def __init__(self, args: ModelArgs):
        super().__init__()
        self.tok_embeddings = nn.Embedding(args.vocab_size, args.dim)
        self.layers = nn.ModuleList(Block(args) for _ in range(args.n_layers))
        self.norm = RMSNorm(args.dim)
        self.output = nn.Linear(args.dim, args.vocab_size, bias=False)

    def forward(self, tokens, mask):
        h = self.tok_embeddings(tokens)
        for layer in self.layers:
            h = layer(h, mask)
        return self.output(self.norm(h))


def causal_mask(seq_len: int, device: torch.device) -> torch.Tensor:
    mask = torch.full((seq_len, seq_len), float("-inf"), device=device)  # ok
    return torch.triu(mask, diagonal=1)


def main():
    args = get_args()
    dist.init_process_group(backend="neuron")  # ok
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.accelerator.set_device_index(local_rank)  # ok
    acc = torch.accelerator.current_accelerator()  # ok
    assert acc is not None and acc.type == "neuron", f"expected a neuron accelerator, got {acc}"  # ok
    device = torch.device("neuron", local_rank)  # ok

    model = Transformer(ModelArgs(max_seq_len=args.seq_len)).to(device)
    model = DDP(model)
    train_model = torch.compile(model)  # expect: compilation
    eval_model = torch.compile(model.module, backend="neuron", mode=args.compile_mode)  # expect-any(nt-mode): compilation
    norm_ref = torch.jit.script(RMSNorm(ModelArgs().dim))  # expect: compilation

    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, betas=(0.9, 0.95), fused=True)  # may: kernels
    mask = causal_mask(args.seq_len, device)

    for step in range(args.steps):
        tokens = torch.randint(0, 32000, (args.batch_size, args.seq_len + 1), device=device)
        with torch.autocast(device_type=device.type, dtype=torch.bfloat16):  # ok
            logits = train_model(tokens[:, :-1], mask)
            loss = F.cross_entropy(logits.flatten(0, 1).float(), tokens[:, 1:].flatten())
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        xm.mark_step()  # may: runtime
        if step % 10 == 0 and dist.get_rank() == 0:
            torch.accelerator.synchronize()  # ok
            print(f"step {step} loss {loss.item():.4f} on {device.type} (no CUDA graphs on neuron)")  # ok

    with torch.no_grad():
        eval_logits = eval_model(tokens[:, :-1], mask)
        print("eval logits", tuple(eval_logits.shape), "norm ref", norm_ref.weight.shape)

    dist.destroy_process_group()


if __name__ == "__main__":
    main()
