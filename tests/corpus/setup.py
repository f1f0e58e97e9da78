"""Build script for fastattn-ext: fused attention kernels plus the Python package."""
import os
import re
import subprocess
import sys
from pathlib import Path

from setuptools import find_packages, setup

import torch
from torch.utils.cpp_extension import BuildExtension  # ok
from torch.utils.cpp_extension import CUDAExtension
from torch.utils.cpp_extension import CUDA_HOME

ROOT = Path(__file__).parent
VERSION = "0.3.1"
# Kernels target cuda 12.x; older toolkits are not tested.  # ok


def nvcc_version(cuda_dir):
    out = subprocess.check_output([os.path.join(cuda_dir, "bin", "nvcc"), "-V"], text=True)
    match = re.search(r"release (\d+)\.(\d+)", out)
    return tuple(int(g) for g in match.groups()) if match else (0, 0)


def driver_visible() -> bool:
    try:
        subprocess.check_output(["nvidia-smi", "-L"])  # expect: environment
        return True
    except (OSError, subprocess.CalledProcessError):
        return False


def detect_archs() -> str:
    if os.environ.get("TORCH_CUDA_ARCH_LIST"):
        return os.environ["TORCH_CUDA_ARCH_LIST"]
    if torch.cuda.is_available():  # expect: runtime
        archs = set()
        for i in range(torch.cuda.device_count()):  # expect: runtime
            major, minor = torch.cuda.get_device_capability(i)  # expect: runtime
            archs.add(f"{major}.{minor}")
        return ";".join(sorted(archs))
    return "8.0;9.0"


def check_env():
    cuda_dir = os.environ.get("CUDA_HOME", "/usr/local/cuda")  # expect: environment
    torch_cuda = torch.version.cuda  # expect: environment
    if not driver_visible():
        print("warning: building without a visible cuda device", file=sys.stderr)  # ok
    print(f"torch {torch.__version__}, nvcc {nvcc_version(cuda_dir)}, torch built with {torch_cuda}")  # ok
    return cuda_dir


def get_extensions():
    if os.environ.get("FASTATTN_SKIP_EXT") == "1" or CUDA_HOME is None:  # expect: environment
        return []
    check_env()
    os.environ["TORCH_CUDA_ARCH_LIST"] = detect_archs()
    return [
        CUDAExtension(  # expect: kernels
            name="fastattn_ext._C",
            sources=["csrc/bindings.cpp", "csrc/attn_fwd.cu", "csrc/attn_bwd.cu"],
            extra_compile_args={"cxx": ["-O3", "-std=c++17"], "nvcc": ["-O3", "--use_fast_math", "-lineinfo"]},
        )
    ]


INSTALL_REQUIRES = [
    "torch==2.3.1+cu121",  # expect: dependencies
    "numpy>=1.24",  # ok
    "einops>=0.7",  # ok
    "nvidia-cublas-cu12>=12.1",  # expect: dependencies
    "nvidia-cuda-runtime-cu12>=12.1",  # expect: dependencies
    "packaging",  # ok
]

EXTRAS_REQUIRE = {
    "cuda": ["nvidia-nccl-cu12==2.20.5", "triton>=2.3"],  # expect: dependencies
    "dev": ["pytest", "ruff", "pre-commit"],  # ok
}

setup(
    name="fastattn-ext",
    version=VERSION,
    description="Fused attention kernels for PyTorch",
    long_description=(ROOT / "README.md").read_text() if (ROOT / "README.md").exists() else "",
    long_description_content_type="text/markdown",
    keywords="cuda attention kernels transformer",  # ok
    packages=find_packages(exclude=("tests", "benchmarks")),
    python_requires=">=3.9",  # ok
    install_requires=INSTALL_REQUIRES,
    extras_require=EXTRAS_REQUIRE,
    dependency_links=["https://download.pytorch.org/whl/cu121"],  # expect: dependencies
    ext_modules=get_extensions(),
    cmdclass={"build_ext": BuildExtension},  # ok
    classifiers=[
        "Programming Language :: Python :: 3",
        "Environment :: GPU :: NVIDIA CUDA :: 12",  # ok
        "License :: OSI Approved :: Apache Software License",
    ],
    zip_safe=False,
)
