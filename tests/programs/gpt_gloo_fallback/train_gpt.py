"""
Tiny GPT pretraining script. Config lives in globals, override with a config
file and/or --key=value (see configurator.py).

    torchrun --standalone --nproc_per_node=2 train_gpt.py config/tiny_ddp.py
    torchrun --standalone --nproc_per_node=2 train_gpt.py config/tiny_ddp.py --device=cpu --backend=gloo --compile=False
"""
import os
import json
import math
import time
from contextlib import nullcontext

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

# ---------------------------------------------------------------- config
out_dir = 'out'
eval_interval = 100
eval_iters = 20
max_iters = 1000
batch_size = 16
block_size = 128
vocab_size = 64
n_layer = 4
n_head = 4
n_embd = 256
dropout = 0.0
learning_rate = 3e-4
weight_decay = 0.1
grad_clip = 1.0
gradient_accumulation_steps = 8
backend = 'nccl'
device = 'cuda:0'
# float16 on V100 / T4, bfloat16 on A100 and newer
dtype = 'bfloat16' if torch.cuda.is_available() and torch.cuda.is_bf16_supported() else 'float16'
compile = True
seed = 42
# ----------------------------------------------------------------
config_keys = [k for k, v in globals().items() if not k.startswith('_') and isinstance(v, (int, float, bool, str))]
exec(open('configurator.py').read())
config = {k: globals()[k] for k in config_keys}


class CausalSelfAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(n_embd, 3 * n_embd)
        self.proj = nn.Linear(n_embd, n_embd)

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(x).split(n_embd, dim=2)
        q = q.view(B, T, n_head, C // n_head).transpose(1, 2)
        k = k.view(B, T, n_head, C // n_head).transpose(1, 2)
        v = v.view(B, T, n_head, C // n_head).transpose(1, 2)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.proj(y.transpose(1, 2).reshape(B, T, C))


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1 = nn.LayerNorm(n_embd)
        self.attn = CausalSelfAttention()
        self.ln2 = nn.LayerNorm(n_embd)
        self.mlp = nn.Sequential(nn.Linear(n_embd, 4 * n_embd), nn.GELU(approximate='tanh'), nn.Linear(4 * n_embd, n_embd))

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class TinyGPT(nn.Module):
    def __init__(self):
        super().__init__()
        self.wte = nn.Embedding(vocab_size, n_embd)
        self.wpe = nn.Embedding(block_size, n_embd)
        self.blocks = nn.ModuleList([Block() for _ in range(n_layer)])
        self.ln_f = nn.LayerNorm(n_embd)
        self.head = nn.Linear(n_embd, vocab_size, bias=False)
        self.wte.weight = self.head.weight

    def forward(self, idx, targets=None):
        pos = torch.arange(idx.size(1), device=idx.device)
        x = self.wte(idx) + self.wpe(pos)
        for blk in self.blocks:
            x = blk(x)
        logits = self.head(self.ln_f(x))
        loss = None if targets is None else F.cross_entropy(logits.flatten(0, 1), targets.flatten())
        return logits, loss


# ---------------------------------------------------------------- ddp setup
ddp = int(os.environ.get('RANK', -1)) != -1
if ddp:
    dist.init_process_group(backend=backend)
    ddp_rank = dist.get_rank()
    ddp_local_rank = int(os.environ['LOCAL_RANK'])
    ddp_world_size = dist.get_world_size()
    if device.startswith('cuda'):
        device = f'cuda:{ddp_local_rank}'
        torch.cuda.set_device(device)
    master_process = ddp_rank == 0
    assert gradient_accumulation_steps % ddp_world_size == 0
    gradient_accumulation_steps //= ddp_world_size
else:
    ddp_rank, ddp_local_rank, ddp_world_size = 0, 0, 1
    master_process = True

device_type = 'cuda' if 'cuda' in device else 'cpu'
torch.manual_seed(seed + ddp_rank)
if device_type == 'cuda':
    torch.cuda.manual_seed(seed + ddp_rank)
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
ptdtype = {'float32': torch.float32, 'bfloat16': torch.bfloat16, 'float16': torch.float16}[dtype]
ctx = nullcontext() if device_type == 'cpu' else torch.amp.autocast(device_type=device_type, dtype=ptdtype)

# data: every rank builds the same synthetic corpus, then the master writes it out once
data_path = os.path.join(out_dir, 'tokens.npy')
if master_process:
    os.makedirs(out_dir, exist_ok=True)
    rng = np.random.default_rng(seed)
    motifs = rng.integers(0, vocab_size, size=(8, 12))
    corpus = motifs[rng.integers(0, 8, size=300)].reshape(-1).astype(np.int16)
    np.save(data_path, corpus)
if ddp:
    dist.barrier()
tokens = torch.from_numpy(np.load(data_path).astype(np.int64))
split = int(0.9 * len(tokens))
data = {'train': tokens[:split], 'val': tokens[split:]}


def get_batch(which):
    d = data[which]
    ix = torch.randint(len(d) - block_size - 1, (batch_size,))
    x = torch.stack([d[i:i + block_size] for i in ix])
    y = torch.stack([d[i + 1:i + 1 + block_size] for i in ix])
    if device_type == 'cuda':
        return x.pin_memory().to(device, non_blocking=True), y.pin_memory().to(device, non_blocking=True)
    return x.to(device), y.to(device)


torch.manual_seed(seed)  # same init on every rank
model = TinyGPT().to(device)
torch.manual_seed(seed + 1000 + ddp_rank)  # different batches per rank
optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate, weight_decay=weight_decay, betas=(0.9, 0.95))
scaler = torch.cuda.amp.GradScaler(enabled=(dtype == 'float16' and device_type == 'cuda'))
if compile:
    model = torch.compile(model)
if ddp:
    model = DDP(model, device_ids=[ddp_local_rank] if device_type == 'cuda' else None)
raw_model = model.module if ddp else model


@torch.no_grad()
def estimate_loss():
    out = {}
    model.eval()
    for which in ['train', 'val']:
        losses = torch.zeros(eval_iters, device=device)
        for k in range(eval_iters):
            X, Y = get_batch(which)
            with ctx:
                _, loss = model(X, Y)
            losses[k] = loss.item()
        mean = losses.mean()
        if ddp:
            dist.all_reduce(mean, op=dist.ReduceOp.SUM)
            mean /= ddp_world_size
        out[which] = mean.item()
    model.train()
    return out


t0 = time.time()
for iter_num in range(max_iters + 1):
    lr = learning_rate * min(1.0, (iter_num + 1) / 4) * 0.5 * (1 + math.cos(math.pi * iter_num / max_iters))
    for g in optimizer.param_groups:
        g['lr'] = lr
    if iter_num % eval_interval == 0:
        losses = estimate_loss()  # collective: every rank participates
        if master_process:
            print(f"step {iter_num}: train {losses['train']:.4f} val {losses['val']:.4f}")
            torch.save({'model': raw_model.state_dict(), 'iter_num': iter_num, 'config': config},
                       os.path.join(out_dir, 'ckpt.pt'))
    if iter_num == max_iters:
        break
    for micro_step in range(gradient_accumulation_steps):
        X, Y = get_batch('train')
        if ddp:
            model.require_backward_grad_sync = (micro_step == gradient_accumulation_steps - 1)
        with ctx:
            _, loss = model(X, Y)
            loss = loss / gradient_accumulation_steps
        scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    gnorm = torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
    scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad(set_to_none=True)
    if master_process:
        dt = time.time() - t0
        t0 = time.time()
        print(f"iter {iter_num}: loss {loss.item() * gradient_accumulation_steps:.4f} gnorm {gnorm:.3f} {dt * 1000:.1f}ms")

if device_type == 'cuda' and master_process:
    print(f"peak memory {torch.cuda.max_memory_allocated() / 2**20:.1f} MiB")

if master_process:
    w = raw_model.head.weight.detach().float().cpu()
    print("RESULT " + json.dumps({
        "train_loss": round(losses['train'], 6),
        "val_loss": round(losses['val'], 6),
        "head_weight_sum": round(w.sum().item(), 6),
        "head_weight_head": [round(v, 6) for v in w[0, :4].tolist()],
        "world_size": ddp_world_size,
    }))
if ddp:
    dist.destroy_process_group()
