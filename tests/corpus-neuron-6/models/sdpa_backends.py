"""Attention helpers shared by the training and serving code."""
import contextlib
import math

import torch
import torch._inductor.config as inductor_config  # may: kernels
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel  # may: kernels

# Preference order when the caller does not ask for a specific kernel.
DEFAULT_SDPA_BACKENDS = [  # expect: kernels
    SDPBackend.CUDNN_ATTENTION,
    SDPBackend.FLASH_ATTENTION,
    SDPBackend.EFFICIENT_ATTENTION,
    SDPBackend.MATH,
]

inductor_config.coordinate_descent_tuning = True  # expect: kernels
inductor_config.triton.unique_kernel_names = True  # expect: kernels
inductor_config.fx_graph_cache = True  # may: kernels, compilation


def attention(q, k, v, mask=None, backends=None, dropout_p=0.0):
    backends = backends or DEFAULT_SDPA_BACKENDS
    with sdpa_kernel(backends):  # expect: kernels
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=dropout_p)  # ok


def legacy_attention(q, k, v, is_causal=True):
    # torch<2.3 spelling
    with torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=False, enable_mem_efficient=True):  # expect: kernels; may: device
        return F.scaled_dot_product_attention(q, k, v, is_causal=is_causal)


def reference_attention(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    if mask is not None:
        scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)  # may: precision
    return scores.softmax(-1) @ v


def math_only():
    return sdpa_kernel(SDPBackend.MATH)  # may: kernels


@contextlib.contextmanager
def no_kernel_override():
    yield
