"""Small autoregressive decoder with early-exit of finished sequences.

Compiled with torch.compile; dynamic shapes are enabled so that the
shrinking batch does not trigger a recompile on every step.
"""
import argparse

import torch
import torch._dynamo
from torch import nn

torch._dynamo.config.automatic_dynamic_shapes = True  # expect: compilation
torch._dynamo.config.cache_size_limit = 64  # may: compilation


class TinyDecoder(nn.Module):
    def __init__(self, vocab: int = 32000, dim: int = 512, layers: int = 4, eos_id: int = 2):
        super().__init__()
        self.eos_id = eos_id
        self.embed = nn.Embedding(vocab, dim)
        layer = nn.TransformerEncoderLayer(dim, nhead=8, batch_first=True, norm_first=True)
        self.blocks = nn.TransformerEncoder(layer, num_layers=layers)
        self.lm_head = nn.Linear(dim, vocab, bias=False)

    def forward(self, tokens: torch.Tensor, finished: torch.Tensor) -> torch.Tensor:
        # tokens [B, T]; finished [B] bool
        alive = ~finished
        x = self.embed(tokens[alive])  # expect: compilation
        mask = nn.Transformer.generate_square_subsequent_mask(x.size(1), device=x.device)
        h = self.blocks(x, mask=mask, is_causal=True)
        logits_alive = self.lm_head(h[:, -1])
        (alive_idx,) = torch.where(alive)  # may: compilation
        logits = torch.zeros(tokens.size(0), logits_alive.size(-1), device=tokens.device, dtype=logits_alive.dtype)
        logits = logits.index_copy(0, alive_idx, logits_alive)
        return logits


class StaticDecoderStep(nn.Module):
    """Fixed-shape variant: keeps finished rows and masks them out."""

    def __init__(self, base: TinyDecoder):
        super().__init__()
        self.base = base

    def forward(self, tokens: torch.Tensor, finished: torch.Tensor) -> torch.Tensor:
        x = self.base.embed(tokens)
        mask = nn.Transformer.generate_square_subsequent_mask(x.size(1), device=x.device)
        h = self.base.blocks(x, mask=mask, is_causal=True)
        logits = self.base.lm_head(h[:, -1])
        eos_only = torch.full_like(logits, float("-inf")).index_fill(1, torch.tensor([self.base.eos_id], device=logits.device), 0.0)
        return torch.where(finished[:, None], eos_only, logits)  # ok


@torch.no_grad()
def generate(step_fn, prompt: torch.Tensor, max_new_tokens: int, eos_id: int) -> torch.Tensor:
    tokens = prompt
    finished = torch.zeros(prompt.size(0), dtype=torch.bool, device=prompt.device)
    for _ in range(max_new_tokens):
        torch._dynamo.mark_dynamic(tokens, 1)  # may: compilation
        next_tok = step_fn(tokens, finished).argmax(-1)
        tokens = torch.cat([tokens, next_tok[:, None]], dim=1)
        finished |= next_tok == eos_id
        if bool(finished.all()):
            break
    return tokens


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--static", action="store_true", help="use the fixed-shape step (no recompiles)")
    parser.add_argument("--max-new-tokens", type=int, default=64)
    args = parser.parse_args()

    model = TinyDecoder().eval()
    if args.static:
        step = torch.compile(StaticDecoderStep(model), mode="reduce-overhead")  # expect: compilation
    else:
        step = torch.compile(model, dynamic=True)  # may: compilation
    prompt = torch.randint(0, 32000, (4, 16))
    print(generate(step, prompt, args.max_new_tokens, model.eos_id).shape)


if __name__ == "__main__":
    main()
