"""Environment defaults applied before torch is imported."""
from __future__ import annotations

import os
from typing import Mapping, Optional

DEFAULT_ENV = {
    "CUDA_VISIBLE_DEVICES": "0,1,2,3,4,5,6,7",  # expect: environment
    "NCCL_IB_DISABLE": "0",  # expect: distributed
    "TORCH_NCCL_AVOID_RECORD_STREAMS": "1",  # expect: distributed
    "TOKENIZERS_PARALLELISM": "false",
    "PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True",  # may: environment, runtime
    "CUDA_DEVICE_MAX_CONNECTIONS": "1",  # may: environment
    "OMP_NUM_THREADS": "8",
}


def apply_env_defaults(overrides: Optional[Mapping[str, str]] = None) -> None:
    for key, value in {**DEFAULT_ENV, **(overrides or {})}.items():
        os.environ.setdefault(key, value)  # may: environment, distributed
    if os.getenv("USE_TPU") == "1":
        os.environ["XLA_USE_BF16"] = "1"  # expect: precision


def visible_device_count() -> int:
    visible = os.environ.get("CUDA_VISIBLE_DEVICES", "")  # expect: environment
    return len([d for d in visible.split(",") if d.strip()])
