"""Pick the right PyTorch wheel index for the local CUDA toolkit."""
import re
import shutil
import subprocess
from typing import List, Optional

BASE = "https://download.pytorch.org/whl"
SUPPORTED_CUDA = ("11.8", "12.1", "12.4")  # may: dependencies


def detect_cuda_version() -> Optional[str]:
    try:
        import torch

        cuda = torch.version.cuda  # expect: environment|dependencies
        if cuda:
            return cuda
    except ImportError:
        pass
    nvcc = shutil.which("nvcc")  # may: environment, dependencies
    if nvcc:
        out = subprocess.run([nvcc, "--version"], capture_output=True, text=True).stdout
        m = re.search(r"release (\d+\.\d+)", out)
        return m.group(1) if m else None
    return None


def index_url_for(cuda_version: Optional[str]) -> str:
    if cuda_version is None:
        return f"{BASE}/cpu"
    if cuda_version not in SUPPORTED_CUDA:
        raise ValueError(f"unsupported CUDA version {cuda_version}")
    return f"{BASE}/cu{cuda_version.replace('.', '')}"  # may: dependencies


def pip_command(torch_version: str, cuda_version: Optional[str] = None) -> List[str]:
    cuda_version = cuda_version or detect_cuda_version()
    tag = "cpu" if cuda_version is None else "cu" + cuda_version.replace(".", "")  # may: dependencies
    return ["pip", "install", "--index-url", index_url_for(cuda_version), f"torch=={torch_version}+{tag}"]  # may: dependencies


def help_text() -> str:
    return "If flash-attn is needed, run: pip install flash-attn --no-build-isolation"  # may: dependencies
