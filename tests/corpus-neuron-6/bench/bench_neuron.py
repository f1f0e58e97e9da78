# target: neuron
"""Throughput benchmark for the TorchNeuron eager + compile path."""
import argparse
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class PatchEmbedUpsampler(nn.Module):
    def __init__(self, dim=256):
        super().__init__()
        self.proj = nn.Conv2d(3, dim, kernel_size=16, stride=16)
        self.blocks = nn.Sequential(*[nn.TransformerEncoderLayer(dim, 8, batch_first=True) for _ in range(4)])
        self.head = nn.Conv2d(dim, 1, kernel_size=1)

    def forward(self, x, flow=None):
        b, _, h, w = x.shape
        t = self.proj(x)
        gh, gw = t.shape[-2:]
        t = self.blocks(t.flatten(2).transpose(1, 2)).transpose(1, 2).reshape(b, -1, gh, gw)
        out = F.interpolate(self.head(t), size=(h, w), mode="bilinear", align_corners=False)  # expect: compilation
        if flow is not None:
            out = F.grid_sample(out, flow, mode="bilinear", align_corners=False)  # expect: compilation
        return out


def bench(fn, x, iters, sync):
    for _ in range(5):
        fn(x)
    sync()
    t0 = time.perf_counter()
    for _ in range(iters):
        fn(x)
    sync()
    return (time.perf_counter() - t0) / iters


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--device-type", default="neuron")
    ap.add_argument("--iters", type=int, default=50)
    args = ap.parse_args()

    device_type = args.device_type
    device = torch.device(device_type)  # ok
    backend_mod = getattr(torch, device_type, torch.cuda)  # ok
    sync = getattr(backend_mod, "synchronize", lambda: None)  # ok

    model = PatchEmbedUpsampler().eval().to(device)
    x = torch.randn(8, 3, 256, 256, device=device)

    with torch.no_grad():
        eager_s = bench(model, x, args.iters, sync)
        compiled = torch.compile(model)  # expect: compilation
        default_s = bench(compiled, x, args.iters, sync)
        neuron_compiled = torch.compile(model, backend="neuron")  # ok
        neuron_s = bench(neuron_compiled, x, args.iters, sync)
        scripted = torch.jit.script(model)  # expect: compilation
        frozen = torch.jit.freeze(scripted)  # expect: compilation

    print(f"eager {eager_s*1e3:.2f} ms | compile(default) {default_s*1e3:.2f} ms | compile(neuron) {neuron_s*1e3:.2f} ms")
    return frozen


if __name__ == "__main__":
    main()
