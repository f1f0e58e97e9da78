"""Micro-benchmarks for GEMM, attention and a fused Triton kernel.

Usage: python benchmark.py --sizes 1024 2048 4096 --dtype bf16 [--compile]
Results are written as JSON; timings use cuda events.
"""
import argparse
import json
import statistics
import time

import torch
import torch.nn.functional as F
import triton  # expect: kernels
import triton.language as tl  # expect: kernels

DTYPES = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32, "fp64": torch.float64}  # ok


@triton.autotune(configs=[triton.Config({"BLOCK": 1024}, num_warps=4), triton.Config({"BLOCK": 2048}, num_warps=8)], key=["n"])  # expect: kernels
@triton.jit  # expect: kernels
def _scaled_add_kernel(x_ptr, y_ptr, out_ptr, alpha, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x * alpha + y, mask=mask)


def triton_scaled_add(x: torch.Tensor, y: torch.Tensor, alpha: float) -> torch.Tensor:
    out = torch.empty_like(x)  # ok
    n = x.numel()
    grid = lambda meta: (triton.cdiv(n, meta["BLOCK"]),)
    _scaled_add_kernel[grid](x, y, out, alpha, n)
    return out


@torch.library.custom_op("bench::scaled_add", mutates_args=(), device_types="cuda")  # expect: kernels
def scaled_add_op(x: torch.Tensor, y: torch.Tensor, alpha: float) -> torch.Tensor:
    return triton_scaled_add(x, y, alpha)


def cuda_time(fn, warmup: int = 10, iters: int = 50) -> float:
    """Time `fn` with cuda events and return the median in milliseconds."""  # ok
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()  # expect: runtime
    times = []
    for i in range(iters):
        start = torch.cuda.Event(enable_timing=True)  # expect: runtime
        end = torch.cuda.Event(enable_timing=True)  # expect: runtime
        torch.cuda.nvtx.range_push(f"iter{i}")  # expect: runtime
        start.record()
        fn()
        end.record()
        torch.cuda.nvtx.range_pop()  # expect: runtime
        torch.cuda.synchronize()  # expect: runtime
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def wall_time(fn, iters: int = 50) -> float:
    t0 = time.perf_counter()  # ok
    for _ in range(iters):
        fn()
    return (time.perf_counter() - t0) * 1e3 / iters  # ok


def bench_gemm(n: int, dtype: torch.dtype, device: str) -> dict:
    a = torch.randn(n, n, device=device, dtype=dtype)  # ok
    b = torch.randn(n, n, device=device, dtype=dtype)  # ok
    ms = cuda_time(lambda: a @ b)
    return {"op": "gemm", "n": n, "ms": ms, "tflops": 2 * n**3 / (ms * 1e-3) / 1e12}


def bench_sdpa(seq: int, dtype: torch.dtype, device: str) -> dict:
    q = torch.randn(8, 16, seq, 64, device=device, dtype=dtype)  # ok
    k, v = torch.randn_like(q), torch.randn_like(q)
    ms = cuda_time(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True))
    return {"op": "sdpa", "seq": seq, "ms": ms}


def bench_fp8_cast(n: int) -> dict:
    x = torch.randn(n, n, device="cuda")  # expect: device
    ms = cuda_time(lambda: x.to(torch.float8_e4m3fnuz))  # expect: precision
    return {"op": "fp8_cast", "n": n, "ms": ms}


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--device", default="cuda")  # expect: device
    p.add_argument("--sizes", type=int, nargs="+", default=[1024, 2048, 4096])
    p.add_argument("--dtype", choices=list(DTYPES), default="bf16")  # ok
    p.add_argument("--tf32", action="store_true")
    p.add_argument("--compile", action="store_true")
    p.add_argument("--out", default="bench.json")
    args = p.parse_args()

    torch.backends.cudnn.benchmark = True  # expect: runtime
    torch.backends.cuda.matmul.allow_tf32 = args.tf32  # expect: precision
    torch.manual_seed(0)  # ok
    dtype = DTYPES[args.dtype]  # ok
    if args.device == "cuda":  # expect: device
        name = torch.cuda.get_device_name()  # expect: runtime
        major, minor = torch.cuda.get_device_capability()  # expect: runtime
        cuda_ver = torch.version.cuda  # expect: environment
        print(f"Benchmarking on {name} (sm_{major}{minor}), cuda {cuda_ver}")  # ok

    results = []
    for n in args.sizes:
        torch.cuda.reset_peak_memory_stats()  # expect: runtime
        results.append(bench_gemm(n, dtype, args.device))
        results.append(bench_sdpa(n, dtype, args.device))
        results.append(bench_fp8_cast(n))
        peak = torch.cuda.max_memory_allocated() / 2**20  # expect: runtime
        print(f"n={n}: peak cuda memory {peak:.0f} MiB")  # ok

    x = torch.randn(1 << 24, device=args.device)  # ok
    y = torch.randn_like(x)
    results.append({"op": "scaled_add_eager", "ms": cuda_time(lambda: scaled_add_op(x, y, 0.5))})
    if args.compile:
        fn = torch.compile(lambda a, b: a * 0.5 + b)  # ok
        fn_tuned = torch.compile(lambda a, b: a * 0.5 + b, mode="max-autotune")  # expect: compilation
        results.append({"op": "scaled_add_compiled", "ms": cuda_time(lambda: fn(x, y))})
        results.append({"op": "scaled_add_autotuned", "ms": cuda_time(lambda: fn_tuned(x, y))})

    w = torch.randn(4096, 4096, device=args.device)  # ok
    with torch.autocast(device_type="cuda", dtype=torch.float16):  # expect: device, precision
        results.append({"op": "autocast_linear", "ms": wall_time(lambda: F.linear(x[:4096 * 8].view(8, 4096), w))})

    with open(args.out, "w") as f:
        json.dump(results, f, indent=2)
    print(json.dumps(results[-1]))  # ok


if __name__ == "__main__":
    main()
