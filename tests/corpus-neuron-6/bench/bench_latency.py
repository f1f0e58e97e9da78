"""Latency benchmark: eager vs compiled vs CUDA-graph replay."""
import argparse
import statistics
from typing import Callable, Optional

import torch
import torchvision


def time_cuda(fn: Callable[[], torch.Tensor], iters: int, stream: Optional[torch.cuda.Stream] = None) -> list:  # ok
    times = []
    for _ in range(iters):
        start = torch.cuda.Event(enable_timing=True)  # expect: device|runtime
        end = torch.cuda.Event(enable_timing=True)  # expect: device|runtime
        start.record(stream)
        fn()
        end.record(stream)
        torch.cuda.synchronize()  # expect: device|runtime
        times.append(start.elapsed_time(end))
    return times


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="resnet50")
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--iters", type=int, default=100)
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--compile-mode", default="max-autotune")  # expect-any(bench_mode): compilation
    args = ap.parse_args()

    torch.backends.cudnn.benchmark = True  # may: kernels, device
    device = torch.device("cuda:0")  # expect: device
    model = getattr(torchvision.models, args.model)().eval().to(device, memory_format=torch.channels_last)
    x = torch.randn(args.batch, 3, 224, 224, device=device).to(memory_format=torch.channels_last)

    results = {}
    with torch.inference_mode():
        eager = lambda: model(x)
        for _ in range(args.warmup):
            eager()
        results["eager"] = time_cuda(eager, args.iters)

        mode = args.compile_mode
        compiled = torch.compile(model, mode=mode)  # expect-any(bench_mode): compilation
        for _ in range(args.warmup):
            compiled(x)
        results[f"compile[{mode}]"] = time_cuda(lambda: compiled(x), args.iters)

        # manual CUDA graph capture
        static_x = x.clone()
        s = torch.cuda.Stream()  # expect: device|runtime
        s.wait_stream(torch.cuda.current_stream())  # expect: device|runtime
        with torch.cuda.stream(s):  # expect: device|runtime
            for _ in range(3):
                model(static_x)
        torch.cuda.current_stream().wait_stream(s)  # expect: device|runtime
        graph = torch.cuda.CUDAGraph()  # expect: device|runtime; may: kernels, compilation
        with torch.cuda.graph(graph):  # expect: device|runtime; may: kernels, compilation
            static_y = model(static_x)
        results["cudagraph"] = time_cuda(graph.replay, args.iters)

    for name, ts in results.items():
        print(f"{name:>28s}: p50 {statistics.median(ts):7.3f} ms  p90 {sorted(ts)[int(0.9 * len(ts))]:7.3f} ms")
    print(f"peak memory {torch.cuda.max_memory_allocated() / 2**20:.0f} MiB")  # expect: device|runtime


if __name__ == "__main__":
    main()
