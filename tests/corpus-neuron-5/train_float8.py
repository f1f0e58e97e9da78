"""Float8 / MXFP8 training for Llama-style models with torchao."""
import argparse

import torch
import torch.nn as nn
from torchao.float8 import Float8LinearConfig, convert_to_float8_training  # may: kernels, dependencies


def module_filter_fn(mod: nn.Module, fqn: str) -> bool:
    if fqn == "output":
        return False
    if isinstance(mod, nn.Linear):
        return mod.in_features % 16 == 0 and mod.out_features % 16 == 0
    return True


def maybe_enable_float8(model: nn.Module, recipe: str = "tensorwise") -> nn.Module:
    if not torch.cuda.is_available():  # may: device
        return model
    major, minor = torch.cuda.get_device_capability()  # expect-any(fp8-llama): kernels; may: device
    if (major, minor) < (8, 9):  # expect-any(fp8-llama): kernels
        print("float8 needs SM89 or newer; training in bf16")
        return model
    config = Float8LinearConfig.from_recipe_name(recipe)
    convert_to_float8_training(model, config=config, module_filter_fn=module_filter_fn)  # expect-any(fp8-llama): kernels
    return model


def maybe_enable_mxfp8(model: nn.Module) -> nn.Module:
    from torchao.prototype.mx_formats import MXLinearConfig  # may: kernels, dependencies
    from torchao.quantization import quantize_

    if torch.cuda.get_device_capability() >= (10, 0):  # expect-any(mxfp8-llama): kernels; may: device
        quantize_(model, MXLinearConfig(elem_dtype=torch.float8_e4m3fn, block_size=32))  # expect-any(mxfp8-llama): kernels
    return model


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--recipe", default="tensorwise", choices=["tensorwise", "rowwise"])
    p.add_argument("--mx", action="store_true")
    args = p.parse_args()
    from model import Transformer, ModelArgs

    model = Transformer(ModelArgs.from_name("llama3-8b"))
    model = model.to(torch.bfloat16).cuda()  # expect: device
    model = maybe_enable_mxfp8(model) if args.mx else maybe_enable_float8(model, args.recipe)
    model = torch.compile(model)  # may: compilation
    return model


if __name__ == "__main__":
    main()
