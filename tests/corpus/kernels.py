try:
    import flash_attn  # expect: kernels
except ImportError:  # ok
    flash_attn = None

import triton  # expect: kernels
import triton.language as tl  # expect: kernels
from torch.utils.cpp_extension import load_inline  # ok

ext = load_inline("ops", cpp_sources="", cuda_sources="__global__ void k() {}")  # expect: kernels


@triton.jit  # expect: kernels
def add_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    return pid


def compiled(model):
    import torch
    return torch.compile(model, mode="reduce-overhead")  # expect: compilation


def dynamic(model):
    import torch
    return torch.compile(model, dynamic=True)  # expect: compilation


def version_probe():
    import torch
    return torch.version.cuda  # expect: environment
