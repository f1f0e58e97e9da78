# target: neuron
"""Helpers that wrap models with torch.compile / TorchScript before deployment on Trainium."""
import functools
import os

import torch
import torch.nn as nn

COMPILE_MODE = os.environ.get("COMPILE_MODE", "max-autotune")  # may: compilation

compile_fn = functools.partial(torch.compile, mode="reduce-overhead", fullgraph=True)  # expect: compilation
compile_dynamic = functools.partial(torch.compile, dynamic=True)  # expect: compilation
neuron_compile = functools.partial(torch.compile, backend="neuron")  # ok


def maybe_compile(model: nn.Module, mode: str = COMPILE_MODE) -> nn.Module:
    if os.environ.get("DISABLE_COMPILE"):
        return model
    return torch.compile(model, mode=mode)  # expect: compilation


def compile_plain(model: nn.Module) -> nn.Module:
    return torch.compile(model)  # expect: compilation


def compile_for_neuron(model: nn.Module) -> nn.Module:
    return torch.compile(model, backend="neuron", dynamic=False)  # ok


@torch.compile  # expect: compilation
def fused_gelu(x: torch.Tensor) -> torch.Tensor:
    return 0.5 * x * (1.0 + torch.tanh(0.7978845608 * (x + 0.044715 * x.pow(3))))


@torch.compile(fullgraph=True, dynamic=False)  # expect: compilation
def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * weight


@torch.compile(backend="neuron")  # ok
def swiglu(x: torch.Tensor, w1: torch.Tensor, w2: torch.Tensor, w3: torch.Tensor) -> torch.Tensor:
    return (torch.nn.functional.silu(x @ w1) * (x @ w3)) @ w2


@torch.jit.script  # expect: compilation
def bias_dropout_add(x: torch.Tensor, bias: torch.Tensor, residual: torch.Tensor, prob: float) -> torch.Tensor:
    return residual + torch.nn.functional.dropout(x + bias, p=prob, training=True)


def export_torchscript(model: nn.Module, path: str) -> torch.jit.ScriptModule:
    scripted = torch.jit.script(model.eval())  # expect: compilation
    frozen = torch.jit.freeze(scripted)  # expect: compilation
    frozen.save(path)
    return frozen
