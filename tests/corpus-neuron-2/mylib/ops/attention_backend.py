"""Pick a scaled-dot-product-attention implementation and tune Inductor at import time."""
import contextlib
import os

try: import torch  # ok
except ImportError: torch = None  # ok

if torch is not None:
    import torch._inductor.config as inductor_config  # may: kernels
    from torch.nn.attention import SDPBackend, sdpa_kernel  # may: kernels

    # Preferred order; the first backend that supports the inputs wins.
    DEFAULT_SDPA_BACKENDS = [
        SDPBackend.CUDNN_ATTENTION,
        SDPBackend.FLASH_ATTENTION,
        SDPBackend.EFFICIENT_ATTENTION,
        SDPBackend.MATH,
    ]  # expect: kernels

SUPPORTED_ACCELERATORS = {"cpu", "gpu", "cuda", "mps"}  # expect: kernels


def check_accelerator(name: str) -> str:
    if name not in SUPPORTED_ACCELERATORS:
        raise ValueError(f"Unsupported accelerator {name!r}; expected one of {sorted(SUPPORTED_ACCELERATORS)}")  # ok
    return name


def configure_inductor(max_autotune: bool = True) -> None:
    inductor_config.coordinate_descent_tuning = True  # expect: kernels
    inductor_config.triton.unique_kernel_names = True  # expect: kernels
    inductor_config.max_autotune_gemm_backends = "TRITON,ATEN" if max_autotune else "ATEN"  # expect: kernels


@contextlib.contextmanager
def attention_backend(backends=None):
    """Restrict SDPA to ``backends`` (defaults to DEFAULT_SDPA_BACKENDS)."""
    with sdpa_kernel(backends or DEFAULT_SDPA_BACKENDS):  # expect: kernels
        yield


def legacy_flash_only():
    # PyTorch < 2.3 spelling of the same switch.
    return torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=False, enable_mem_efficient=False)  # expect: kernels


def maybe_thunder(model):
    """Optionally compile ``model`` with Lightning Thunder (nvFuser + cuDNN executors)."""
    if os.environ.get("USE_THUNDER") == "1":
        import thunder  # may: kernels

        return thunder.jit(model, executors=["nvfuser", "cudnn", "sdpa"])  # expect: kernels
    return model
