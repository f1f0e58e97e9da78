"""Pre-training entry point: compiler tuning and optional low-precision matmuls.

Mirrors the knobs used by torchtitan/gpt-fast style recipes.
"""
import argparse
import logging

import torch
import torch._inductor.config as inductor_config
from torch import nn

logger = logging.getLogger("pretrain")


def configure_inductor(max_autotune: bool) -> None:
    inductor_config.coordinate_descent_tuning = True  # expect: kernels
    inductor_config.triton.unique_kernel_names = True  # expect: kernels
    inductor_config.fx_graph_cache = True  # may: kernels
    if max_autotune:
        torch._inductor.config.max_autotune_gemm_backends = "TRITON,ATEN"  # expect: kernels
        torch._inductor.config.triton.cudagraphs = True  # expect: kernels


def _fp8_module_filter(module: nn.Module, fqn: str) -> bool:
    # keep the output projection in high precision
    return isinstance(module, nn.Linear) and "lm_head" not in fqn and module.in_features % 16 == 0


def maybe_enable_float8(model: nn.Module, enabled: bool) -> nn.Module:
    if not enabled:
        return model
    from torchao.float8 import Float8LinearConfig, convert_to_float8_training  # may: kernels

    if torch.cuda.get_device_capability() < (8, 9):  # expect-any(ao-fp8): kernels; expect: device|runtime
        logger.warning("float8 training needs SM89+ (H100/L40S); running in bf16")  # ok
        return model
    config = Float8LinearConfig.from_recipe_name("rowwise")  # may: kernels
    convert_to_float8_training(model, config=config, module_filter_fn=_fp8_module_filter)  # expect-any(ao-fp8): kernels
    return model


def maybe_enable_mxfp8(model: nn.Module) -> nn.Module:
    major, _minor = torch.cuda.get_device_capability()  # expect-any(ao-mx): kernels; expect: device|runtime
    if major >= 10:  # expect-any(ao-mx): kernels
        from torchao.prototype.mx_formats import MXLinearConfig  # may: kernels
        from torchao.quantization import quantize_  # may: kernels

        quantize_(model, MXLinearConfig(elem_dtype=torch.float8_e4m3fn, block_size=32))  # expect-any(ao-mx): kernels; may: precision
    return model


def build_model(dim: int, layers: int) -> nn.Module:
    blocks = [nn.Sequential(nn.LayerNorm(dim), nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim)) for _ in range(layers)]
    return nn.Sequential(*blocks)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--dim", type=int, default=2048)
    parser.add_argument("--layers", type=int, default=8)
    parser.add_argument("--float8", action="store_true")
    parser.add_argument("--mxfp8", action="store_true")
    parser.add_argument("--max-autotune", action="store_true")
    args = parser.parse_args()

    configure_inductor(args.max_autotune)
    model = build_model(args.dim, args.layers)
    model = maybe_enable_float8(model, args.float8)
    if args.mxfp8:
        model = maybe_enable_mxfp8(model)
    model = torch.compile(model, mode="max-autotune")  # expect: compilation
    logger.info("compiled model with %d parameters", sum(p.numel() for p in model.parameters()))  # ok


if __name__ == "__main__":
    main()
