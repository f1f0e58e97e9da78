"""Batched inference timed with CUDA events, choosing the GPU when one is present.

    python infer.py
"""

import torch
import torch.nn as nn

device = "cuda" if torch.cuda.is_available() else "cpu"


def main() -> None:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(64, 128), nn.GELU(), nn.Linear(128, 10)).to(device).eval()
    batch = torch.randn(16, 64).to(device)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    with torch.inference_mode(), torch.autocast("cuda", dtype=torch.float16):
        start.record()
        logits = model(batch)
        end.record()
    torch.cuda.synchronize()
    print(f"top1={logits.argmax(dim=1).tolist()} took {start.elapsed_time(end):.2f} ms")
    print(f"checksum={logits.float().abs().sum().item():.6f}")
    torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
