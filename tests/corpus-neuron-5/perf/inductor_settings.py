"""Global compiler knobs applied by `train.py --fast`."""
import torch
import torch._dynamo.config as dynamo_config  # may: compilation
import torch._inductor.config as inductor_config  # may: kernels


def apply_fast_settings(max_autotune: bool = True) -> None:
    inductor_config.max_autotune = max_autotune  # expect: kernels
    inductor_config.max_autotune_gemm_backends = "TRITON,ATEN"  # expect: kernels
    inductor_config.triton.cudagraphs = True  # expect: kernels
    inductor_config.fx_graph_cache = True  # may: kernels
    dynamo_config.automatic_dynamic_shapes = True  # expect: compilation
    dynamo_config.cache_size_limit = 64
    torch.backends.cuda.matmul.allow_tf32 = True  # may: precision, kernels
    torch.backends.cudnn.allow_tf32 = True  # may: precision, kernels
    torch.set_float32_matmul_precision("high")  # may: precision


def apply_debug_settings() -> None:
    dynamo_config.verbose = True
    inductor_config.debug = True  # may: kernels
