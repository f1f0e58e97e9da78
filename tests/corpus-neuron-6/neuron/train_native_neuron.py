# target: neuron
"""Fine-tune a small GPT on a Trainium device with the native `neuron` device."""
import math

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

BLOCK = 512


class TinyGPT(nn.Module):
    def __init__(self, vocab=50304, dim=384, layers=6, heads=6):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Embedding(BLOCK, dim)
        layer = nn.TransformerEncoderLayer(dim, heads, 4 * dim, batch_first=True, norm_first=True)
        self.blocks = nn.TransformerEncoder(layer, layers)
        self.ln = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab, bias=False)
        mask = torch.triu(torch.full((BLOCK, BLOCK), float("-inf")), diagonal=1)
        self.register_buffer("causal", mask, persistent=False)

    def forward(self, idx):
        t = idx.shape[1]
        x = self.tok(idx) + self.pos(torch.arange(t, device=idx.device))
        x = self.blocks(x, mask=self.causal[:t, :t], is_causal=True)
        return self.head(self.ln(x))


def main():
    device = torch.device("neuron")  # ok
    model = TinyGPT().to(torch.bfloat16).to(device)  # ok
    model = torch.compile(model, backend="neuron")  # ok
    opt = torch.optim.AdamW(model.parameters(), lr=6e-4, betas=(0.9, 0.95))

    tokens = torch.load("data/tokens_u16.pt").long()
    n = (tokens.numel() - 1) // BLOCK
    x = tokens[: n * BLOCK].view(n, BLOCK)
    y = tokens[1 : n * BLOCK + 1].view(n, BLOCK)
    loader = DataLoader(TensorDataset(x, y), batch_size=16, shuffle=True, drop_last=True)

    for step, (xb, yb) in enumerate(loader):
        xb, yb = xb.to(device), yb.to(device)
        logits = model(xb)
        loss = nn.functional.cross_entropy(logits.float().view(-1, logits.size(-1)), yb.view(-1))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        if step % 100 == 0:
            print(f"step {step} loss {loss.item():.3f} ppl {math.exp(loss.item()):.1f}")


if __name__ == "__main__":
    main()
