"""Defaults for the Lightning entry point (overridable from the CLI)."""
from __future__ import annotations

from typing import Any, Dict

import lightning.pytorch as pl
from lightning.pytorch.strategies import DDPStrategy

SUPPORTED_ACCELERATORS = {"cpu", "gpu", "cuda", "mps"}  # expect: kernels; may: device

TRAINER_DEFAULTS: Dict[str, Any] = {
    "accelerator": "gpu",  # may: device
    "devices": 8,
    "num_nodes": 1,
    "strategy": "ddp",  # may: distributed
    "precision": "16-mixed",  # expect: precision
    "max_epochs": 10,
    "gradient_clip_val": 1.0,
    "log_every_n_steps": 50,
}


def build_trainer(accelerator: str = "gpu", precision: str = "bf16-mixed", **overrides: Any) -> pl.Trainer:  # expect: precision; may: device
    if accelerator not in SUPPORTED_ACCELERATORS:  # may: kernels
        raise ValueError(f"accelerator must be one of {sorted(SUPPORTED_ACCELERATORS)}, got {accelerator!r}")
    kwargs = {**TRAINER_DEFAULTS, "accelerator": accelerator, "precision": precision, **overrides}
    if kwargs["strategy"] == "ddp" and kwargs["devices"] != 1:  # may: distributed
        kwargs["strategy"] = DDPStrategy(
            process_group_backend="nccl",  # expect: distributed
            find_unused_parameters=False,
            static_graph=True,
        )
    return pl.Trainer(**kwargs)  # may: precision, device, distributed
