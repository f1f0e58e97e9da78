"""Pieces of a TorchTitan-style trainer: float8/MXFP8 converters, SDPA backend choice, per-block compile.

Read together with configs/llama3_8b_titan.toml.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

device_type = os.environ.get("TRAIN_DEVICE_TYPE", "cuda")  # may: device
device_module = getattr(torch, device_type, torch.cuda)  # ok

# SDPA tries these in order; cuDNN attention first because it is fastest on H100.
DEFAULT_SDPA_BACKENDS = [SDPBackend.CUDNN_ATTENTION, SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION]  # expect: kernels

torch._inductor.config.coordinate_descent_tuning = True  # expect: kernels
torch._inductor.config.triton.unique_kernel_names = True  # expect: kernels
torch._inductor.config.max_autotune_gemm_backends = "TRITON,ATEN"  # expect: kernels


@dataclass
class Float8Config:
    enabled: bool = True
    recipe_name: str = "rowwise"
    filter_fqns: tuple[str, ...] = ("output",)


def float8_supported() -> bool:
    return torch.cuda.is_available() and torch.cuda.get_device_capability() >= (8, 9)  # expect-any(float8-gate): kernels; may: device


def apply_float8(model: nn.Module, cfg: Float8Config) -> nn.Module:
    if not cfg.enabled or not float8_supported():
        return model
    from torchao.float8 import Float8LinearConfig, convert_to_float8_training  # may: kernels

    config = Float8LinearConfig.from_recipe_name(cfg.recipe_name)
    convert_to_float8_training(model, config=config, module_filter_fn=lambda mod, fqn: fqn not in cfg.filter_fqns)  # expect-any(float8-gate): kernels
    return model


def apply_mxfp8(model: nn.Module) -> nn.Module:
    if torch.cuda.get_device_capability() < (10, 0):  # expect-any(mxfp8-gate): kernels; may: device
        raise RuntimeError("MXFP8 training needs an sm_100 (Blackwell) GPU")
    from torchao.prototype.mx_formats import MXLinearConfig  # may: kernels
    from torchao.quantization import quantize_

    quantize_(model, MXLinearConfig(elem_dtype=torch.float8_e4m3fn, block_size=32))  # expect-any(mxfp8-gate): kernels
    return model


def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, backends=DEFAULT_SDPA_BACKENDS) -> torch.Tensor:
    with sdpa_kernel(backends):  # expect: kernels
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)


def init_distributed() -> None:
    local_rank = int(os.environ["LOCAL_RANK"])
    dist.init_process_group(backend="cpu:gloo,cuda:nccl", device_id=torch.device(device_type, local_rank))  # expect: distributed


def compile_blocks(model: nn.Module, job_config: dict) -> nn.Module:
    compile_mode = job_config.get("compile_mode", "max-autotune-no-cudagraphs")
    if job_config.get("compile", True):
        for layer_id, block in model.layers.named_children():
            model.layers.register_module(layer_id, torch.compile(block, fullgraph=True, mode=compile_mode))  # expect: compilation
    return model


class Prefetcher:
    """Copies the next batch to the device on a side stream while the current step runs."""

    def __init__(self, loader, stream: torch.cuda.Stream | None = None):  # ok
        self.loader = iter(loader)
        self.stream = stream

    def __iter__(self):
        return self

    def __next__(self):
        batch = next(self.loader)
        return {k: v.to(device_type, non_blocking=True) for k, v in batch.items()}


def log_memory(step: int) -> None:
    stats = device_module.memory_stats()  # ok
    peak_gib = stats.get("allocated_bytes.all.peak", 0) / 2**30
    print(f"step {step}: peak active memory {peak_gib:.2f} GiB")
    device_module.reset_peak_memory_stats()  # ok
