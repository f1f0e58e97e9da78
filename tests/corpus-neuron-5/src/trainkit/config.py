"""Training configuration.

All knobs live here so that launch scripts only need to override a few fields.
"""
from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field
from typing import Optional


@dataclass
class DistributedConfig:
    backend: str = "nccl"  # expect: distributed
    init_method: str = "env://"
    timeout_minutes: int = 30
    find_unused_parameters: bool = False


@dataclass
class PrecisionConfig:
    mixed_precision: str = "fp16"  # expect: precision
    loss_scale: Optional[float] = None
    grad_clip: float = 1.0


@dataclass
class CompileConfig:
    enabled: bool = True
    mode: str = "max-autotune"  # may: compilation
    fullgraph: bool = False


@dataclass
class TrainConfig:
    model_name: str = "meta-llama/Llama-2-7b-hf"
    output_dir: str = "outputs"
    device: str = "cuda"  # expect: device
    seed: int = 42
    max_seq_len: int = 2048
    per_device_batch_size: int = 8
    dist: DistributedConfig = field(default_factory=DistributedConfig)
    precision: PrecisionConfig = field(default_factory=PrecisionConfig)
    compile: CompileConfig = field(default_factory=CompileConfig)
    backend_override: str = os.getenv("TRAINKIT_BACKEND", "nccl")  # expect: distributed

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, raw: dict) -> "TrainConfig":
        raw = dict(raw)
        dist = DistributedConfig(**raw.pop("dist", {}))
        precision = PrecisionConfig(**raw.pop("precision", {}))
        compile_cfg = CompileConfig(**raw.pop("compile", {}))
        return cls(dist=dist, precision=precision, compile=compile_cfg, **raw)
