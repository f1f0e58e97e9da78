# target: neuron
"""Compile an image classifier for Trainium/Inferentia with torch.compile.

    python inference/compile_neuron.py --model vit_base_patch16_224 --batch-size 8
"""
import argparse
import os
import time

os.environ["NEURON_CC_FLAGS"] = "--model-type transformer --auto-cast matmult --auto-cast-type bf16"  # expect: precision

import timm
import torch


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="vit_base_patch16_224")
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--compile-mode", default="max-autotune", help="passed through to torch.compile")  # may: compilation
    parser.add_argument("--naive", action="store_true", help="plain torch.compile, for comparison")
    parser.add_argument("--iters", type=int, default=50)
    return parser.parse_args()


def fp32_compiler_flags() -> None:
    """Flags for the accuracy run: no auto-cast."""
    os.environ["NEURON_CC_FLAGS"] = "--model-type transformer -O1"  # ok


@torch.compile  # expect: compilation
def postprocess(logits: torch.Tensor) -> torch.Tensor:
    return logits.softmax(-1).topk(5, dim=-1).indices


def build(args: argparse.Namespace):
    model = timm.create_model(args.model, pretrained=True).eval()
    compile_mode = args.compile_mode
    if args.naive:
        compiled = torch.compile(model)  # expect: compilation
    else:
        compiled = torch.compile(model, backend="neuron", mode=compile_mode)  # expect: compilation
    head_only = torch.compile(model.get_classifier(), backend="neuron")  # ok
    return compiled, head_only


@torch.no_grad()
def benchmark(model, batch_size: int, iters: int) -> float:
    x = torch.randn(batch_size, 3, 224, 224)
    model(x)  # first call compiles
    start = time.perf_counter()
    for _ in range(iters):
        postprocess(model(x))
    return (time.perf_counter() - start) / iters


def main() -> None:
    args = parse_args()
    compiled, _ = build(args)
    latency = benchmark(compiled, args.batch_size, args.iters)
    print(f"{args.model}: {latency * 1e3:.2f} ms/batch")


if __name__ == "__main__":
    main()
