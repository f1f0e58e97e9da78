"""Export the intent classifier to TorchScript for the C++ serving binary (libtorch)."""
import argparse

import torch
import torch.nn as nn


@torch.jit.script  # expect: compilation
def fast_gelu(x: torch.Tensor) -> torch.Tensor:
    return 0.5 * x * (1.0 + torch.tanh(0.7978845608 * (x + 0.044715 * x * x * x)))


class IntentClassifier(nn.Module):
    def __init__(self, vocab: int = 30522, dim: int = 256, num_labels: int = 12):
        super().__init__()
        self.num_labels = num_labels
        self.embed = nn.EmbeddingBag(vocab, dim, mode="mean")
        self.proj = nn.Linear(dim, dim)
        self.head = nn.Linear(dim, num_labels)

    def forward(self, token_ids: torch.Tensor, offsets: torch.Tensor) -> torch.Tensor:
        h = fast_gelu(self.proj(self.embed(token_ids, offsets)))
        return self.head(h)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--checkpoint", default="intent.pt")
    parser.add_argument("--output", default="intent_scripted.pt")
    args = parser.parse_args()

    model = IntentClassifier()
    model.load_state_dict(torch.load(args.checkpoint, map_location="cpu"))
    model.eval()
    scripted = torch.jit.script(model)  # expect: compilation
    frozen = torch.jit.freeze(scripted, preserved_attrs=["num_labels"])  # expect: compilation
    frozen = torch.jit.optimize_for_inference(frozen)  # may: compilation
    frozen.save(args.output)


if __name__ == "__main__":
    main()
