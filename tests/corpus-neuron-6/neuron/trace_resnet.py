"""Trace torchvision ResNet-50 for Inf2/Trn1 inference, fp32 weights + compiler auto-cast."""
import argparse

import torch
import torch_neuronx
from torchvision.models import ResNet50_Weights, resnet50


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch-size", type=int, default=1)
    ap.add_argument("--out", default="resnet50_neuron.pt")
    args = ap.parse_args()

    model = resnet50(weights=ResNet50_Weights.IMAGENET1K_V2)
    model.eval()  # keep on CPU, in fp32; the compiler handles the cast
    example = torch.rand(args.batch_size, 3, 224, 224)

    traced = torch_neuronx.trace(
        model,
        example,
        compiler_args=["--auto-cast", "matmult", "--auto-cast-type", "bf16"],  # ok
    )
    torch.jit.save(traced, args.out)

    with torch.no_grad():
        ref = model(example)
        got = traced(example)
    err = (ref - got).abs().max().item()
    assert err < 5e-2, f"max abs error {err}"
    print("saved", args.out, "max err", err)


if __name__ == "__main__":
    main()
