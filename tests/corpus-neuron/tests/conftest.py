"""Shared fixtures: spoof a CUDA box so the launcher and installer logic can be tested on any laptop."""
import os
import stat

import pytest


@pytest.fixture
def fake_nvidia_smi(tmp_path, monkeypatch):
    """Put a fake `nvidia-smi` first on PATH that reports eight A100s."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "nvidia-smi"  # ok
    script.write_text(
        "#!/bin/sh\n"
        "if [ \"$1\" = \"--list-gpus\" ]; then\n"
        "  for i in 0 1 2 3 4 5 6 7; do echo \"GPU $i: NVIDIA A100-SXM4-80GB (UUID: GPU-$i)\"; done\n"  # ok
        "  exit 0\n"
        "fi\n"
        "echo 'NVIDIA A100-SXM4-80GB, 535.104.05, 12.2'\n"  # ok
    )
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    return script


@pytest.fixture
def spoof_cuda(monkeypatch):
    """Make torch believe a GPU is present; nothing is ever allocated on it."""
    torch = pytest.importorskip("torch")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)  # ok
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 8)  # ok
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda index=None: "NVIDIA A100-SXM4-80GB")  # ok
    return torch
