"""Optional float8 training via torchao."""
import logging

import torch
import torch.nn as nn

log = logging.getLogger(__name__)


def float8_supported() -> bool:
    return torch.cuda.is_available() and torch.cuda.get_device_capability() >= (8, 9)  # expect: device|runtime; expect-any(fp8): kernels


def maybe_convert_to_float8(model: nn.Module, enable: bool, recipe: str = "rowwise") -> nn.Module:
    if not enable:
        return model
    if not float8_supported():  # expect-any(fp8): kernels
        log.warning("float8 requested but the device does not support it; training in bf16")
        return model
    from torchao.float8 import Float8LinearConfig, convert_to_float8_training  # expect-any(fp8): kernels

    config = Float8LinearConfig.from_recipe_name(recipe)  # expect-any(fp8): kernels

    def module_filter_fn(mod: nn.Module, fqn: str) -> bool:
        # skip the output projection and layers whose dims are not multiples of 16
        if fqn == "lm_head":
            return False
        if isinstance(mod, nn.Linear):
            return mod.in_features % 16 == 0 and mod.out_features % 16 == 0
        return True

    convert_to_float8_training(model, config=config, module_filter_fn=module_filter_fn)  # expect-any(fp8): kernels
    return model


def maybe_convert_to_mxfp8(model: nn.Module) -> nn.Module:
    major, minor = torch.cuda.get_device_capability()  # expect: device|runtime; expect-any(mxfp8): kernels
    if (major, minor) < (10, 0):  # expect-any(mxfp8): kernels
        return model
    from torchao.prototype.mx_formats import MXLinearConfig  # expect-any(mxfp8): kernels
    from torchao.quantization import quantize_

    quantize_(model, MXLinearConfig(elem_dtype=torch.float8_e4m3fn, block_size=32))  # expect-any(mxfp8): kernels
    return model
