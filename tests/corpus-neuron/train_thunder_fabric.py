"""Small GPT pretraining with Lightning Fabric and Lightning Thunder (nvFuser executor), litgpt style."""
import math
import time

import lightning as L
import torch
import torch.nn as nn
import thunder  # may: kernels
from thunder.executors.nvfuserex import nvfuserex  # may: kernels


class Block(nn.Module):
    def __init__(self, d: int, heads: int):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.attn = nn.MultiheadAttention(d, heads, batch_first=True)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(approximate="tanh"), nn.Linear(4 * d, d))

    def forward(self, x):
        h = self.ln1(x)
        x = x + self.attn(h, h, h, need_weights=False, is_causal=True, attn_mask=nn.Transformer.generate_square_subsequent_mask(x.shape[1], device=x.device))[0]
        return x + self.mlp(self.ln2(x))


class GPT(nn.Module):
    def __init__(self, vocab=50304, d=768, layers=12, heads=12, block_size=1024):
        super().__init__()
        self.wte = nn.Embedding(vocab, d)
        self.wpe = nn.Embedding(block_size, d)
        self.blocks = nn.ModuleList(Block(d, heads) for _ in range(layers))
        self.ln_f = nn.LayerNorm(d)
        self.lm_head = nn.Linear(d, vocab, bias=False)

    def forward(self, idx):
        pos = torch.arange(idx.shape[1], device=idx.device)
        x = self.wte(idx) + self.wpe(pos)
        for blk in self.blocks:
            x = blk(x)
        return self.lm_head(self.ln_f(x))


def main(devices: int = 8, steps: int = 5000, micro_batch: int = 12, block_size: int = 1024):
    fabric = L.Fabric(accelerator="cuda", devices=devices, precision="bf16-mixed", strategy="auto")  # expect: device, precision
    fabric.launch()
    fabric.seed_everything(1337 + fabric.global_rank)

    with fabric.init_module():
        model = GPT(block_size=block_size)
    model = thunder.jit(model, executors=[nvfuserex, "torch"])  # expect: kernels
    optimizer = torch.optim.AdamW(model.parameters(), lr=6e-4, betas=(0.9, 0.95), weight_decay=0.1)
    model, optimizer = fabric.setup(model, optimizer)

    data = torch.randint(0, 50304, (micro_batch * 64, block_size + 1))
    t0 = time.perf_counter()
    for step in range(steps):
        lr = 6e-4 * min(1.0, (step + 1) / 200) * 0.5 * (1 + math.cos(math.pi * step / steps))
        for group in optimizer.param_groups:
            group["lr"] = lr
        chunk = data[(step * micro_batch) % data.shape[0]:][:micro_batch].to(fabric.device)  # ok
        logits = model(chunk[:, :-1])
        loss = nn.functional.cross_entropy(logits.flatten(0, 1), chunk[:, 1:].flatten())
        fabric.backward(loss)
        fabric.clip_gradients(model, optimizer, max_norm=1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        if step % 50 == 0:
            fabric.print(f"step {step} loss {loss.item():.3f} {(time.perf_counter() - t0) * 1000 / (step + 1):.0f} ms/step")


if __name__ == "__main__":
    main()
