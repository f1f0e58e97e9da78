#!/usr/bin/env python
"""Latency/throughput benchmark for a small CNN classifier.

GPU (default):  python benchmark.py --dtype fp16
CPU:            python benchmark.py --device cpu --dtype fp32
"""
import argparse
import json
import statistics
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def get_args():
    p = argparse.ArgumentParser(description="inference benchmark")
    p.add_argument("--device", default="cuda", help="cuda | cuda:N | cpu")
    p.add_argument("--dtype", default="fp16", choices=["fp32", "fp16", "bf16"])
    p.add_argument("--batch-sizes", default="1,8,32")
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--runs", type=int, default=10)
    p.add_argument("--channels-last", action="store_true")
    p.add_argument("--out", default="predictions.npy")
    return p.parse_args()


class SmallConvNet(nn.Module):
    def __init__(self, num_classes=10):
        super().__init__()
        self.c1 = nn.Conv2d(3, 16, 3, padding=1)
        self.b1 = nn.BatchNorm2d(16)
        self.c2 = nn.Conv2d(16, 32, 3, padding=1, stride=2)
        self.b2 = nn.BatchNorm2d(32)
        self.c3 = nn.Conv2d(32, 32, 3, padding=1, stride=2)
        self.fc = nn.Linear(32, num_classes)

    def forward(self, x):
        x = F.relu(self.b1(self.c1(x)))
        x = F.relu(self.b2(self.c2(x)))
        x = F.relu(self.c3(x))
        return self.fc(F.adaptive_avg_pool2d(x, 1).flatten(1))


def timed(fn, device, warmup, runs):
    """returns per-run latencies in ms; CUDA events on GPU, perf_counter on CPU"""
    for _ in range(warmup):
        fn()
    times = []
    if device.type == "cuda":
        torch.cuda.synchronize(device)
        for _ in range(runs):
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end))
    else:
        for _ in range(runs):
            t0 = time.perf_counter()
            fn()
            times.append((time.perf_counter() - t0) * 1e3)
    return times


def main():
    args = get_args()
    device = torch.device(args.device)
    dtype = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[args.dtype]

    torch.manual_seed(0)
    if device.type == "cuda":
        torch.cuda.manual_seed_all(0)
        torch.backends.cudnn.benchmark = True
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True
        print(f"GPU: {torch.cuda.get_device_name(device)}")

    model = SmallConvNet()
    # give BN some non-trivial running statistics
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.running_mean.uniform_(-0.1, 0.1)
                m.running_var.uniform_(0.9, 1.1)
    model.eval().to(device)
    if dtype == torch.float16:
        model.half()
    elif dtype == torch.bfloat16:
        model.bfloat16()
    memory_format = torch.channels_last if args.channels_last else torch.contiguous_format
    model = model.to(memory_format=memory_format)

    rng = np.random.default_rng(0)
    host = torch.from_numpy(rng.standard_normal((32, 3, 32, 32), dtype=np.float32))
    if device.type == "cuda":
        host = host.pin_memory()

    results = {}
    with torch.inference_mode():
        for bs in [int(b) for b in args.batch_sizes.split(",")]:
            x = host[:bs].to(device, non_blocking=True).to(dtype).contiguous(memory_format=memory_format)
            lat = timed(lambda: model(x), device, args.warmup, args.runs)
            p50 = statistics.median(lat)
            print(f"bs={bs:3d}  p50 {p50:.3f} ms  mean {statistics.mean(lat):.3f} ms  {bs / p50 * 1e3:.1f} img/s")
            results[bs] = p50
        logits = model(host.to(device, non_blocking=True).to(dtype).contiguous(memory_format=memory_format)).float()
        probs = logits.softmax(-1)

    if device.type == "cuda":
        torch.cuda.synchronize()
        print(f"peak mem {torch.cuda.max_memory_allocated(device) / 2**20:.1f} MiB")

    preds = probs.argmax(-1).cpu().numpy()
    np.save(args.out, probs.cpu().numpy())
    print("RESULT " + json.dumps({
        "logit_sum": round(logits.sum().item(), 4),
        "first_probs": [round(v, 5) for v in probs[0].cpu().tolist()[:5]],
        "pred_hist": np.bincount(preds, minlength=10).tolist(),
    }))


if __name__ == "__main__":
    main()
