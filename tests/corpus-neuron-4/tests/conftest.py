"""Shared fixtures. GPU fixtures fake a CUDA machine so the device-selection
code can be tested on CPU-only CI runners."""
import os
import stat

import pytest
import torch


@pytest.fixture
def fake_gpu(monkeypatch):
    """Pretend two CUDA devices are present."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)  # ok
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)  # ok
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda idx=0: "NVIDIA A100-SXM4-80GB")  # ok
    yield


@pytest.fixture
def fake_nvidia_smi(tmp_path, monkeypatch):
    """Put a fake `nvidia-smi` first on PATH that reports driver 535 / CUDA 12.2."""
    script = tmp_path / "nvidia-smi"  # ok
    script.write_text('#!/bin/sh\necho "NVIDIA-SMI 535.104.05   Driver Version: 535.104.05   CUDA Version: 12.2"\n')  # ok
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ.get('PATH', '')}")  # ok
    return script


@pytest.fixture
def hide_gpus(monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")  # expect: environment
    yield


def pytest_collection_modifyitems(config, items):
    if torch.cuda.is_available():  # may: device
        return
    skip_gpu = pytest.mark.skip(reason="needs a CUDA device")  # ok
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip_gpu)
