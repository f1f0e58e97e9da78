"""Lightning / Fabric entry points for the LoRA fine-tuning recipes."""
from __future__ import annotations

from typing import Optional

import lightning as L
import torch
from lightning.fabric.plugins import BitsandbytesPrecision  # may: kernels
from lightning.pytorch.strategies import DDPStrategy


def make_fabric(quantize: Optional[str] = None, devices: int = 8) -> L.Fabric:
    plugins = None
    precision = "bf16-true"  # may: precision
    if quantize and quantize.startswith("bnb."):
        plugins = BitsandbytesPrecision(quantize[4:], dtype=torch.bfloat16)  # expect: kernels
        precision = None
    return L.Fabric(devices=devices, accelerator="cuda", strategy="ddp", precision=precision, plugins=plugins)  # expect: device; may: distributed, precision


def make_trainer(precision: str = "16-mixed", max_steps: int = 1000) -> L.Trainer:  # expect: precision
    return L.Trainer(
        accelerator="gpu",  # may: device
        devices="auto",
        precision=precision,
        strategy=DDPStrategy(process_group_backend="nccl"),  # expect: distributed
        max_steps=max_steps,
    )


def jit_with_thunder(model: torch.nn.Module) -> torch.nn.Module:
    import thunder  # expect-any(thunder-jit): kernels
    from thunder.executors.nvfuserex import nvfuserex  # expect-any(thunder-jit): kernels

    return thunder.jit(model, executors=[nvfuserex, "torch"])  # expect-any(thunder-jit): kernels


def make_cpu_trainer() -> L.Trainer:
    return L.Trainer(accelerator="cpu", devices=1, precision="32-true", max_steps=10)  # ok
