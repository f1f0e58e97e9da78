"""torch.compile wrappers used by the trainer and the samplers."""
from __future__ import annotations

import functools
from typing import Any, Optional

import torch

from .config import CompileConfig

_compile_max = functools.partial(torch.compile, mode="max-autotune-no-cudagraphs")  # expect: compilation
_compile_fullgraph = functools.partial(torch.compile, fullgraph=True)  # may: compilation


def compile_model(model: torch.nn.Module, cfg: CompileConfig) -> torch.nn.Module:
    if not cfg.enabled:
        return model
    mode = cfg.mode
    return torch.compile(model, mode=mode, fullgraph=cfg.fullgraph)  # expect: compilation


def compile_if(model: torch.nn.Module, backend: Optional[str] = None, **kwargs: Any) -> torch.nn.Module:
    if backend is None:
        return torch.compile(model, **kwargs)  # may: compilation
    return torch.compile(model, backend=backend, **kwargs)  # may: compilation


@torch.compile(mode="reduce-overhead")  # expect: compilation
def sample_step(logits: torch.Tensor, temperature: float) -> torch.Tensor:
    probs = torch.softmax(logits / temperature, dim=-1)
    return torch.multinomial(probs, 1)


@torch.compile  # may: compilation
def rotate_half(x: torch.Tensor) -> torch.Tensor:
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


def maybe_script(fn):
    return torch.jit.script(fn)  # may: compilation
