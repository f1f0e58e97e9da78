import os
import stat
import subprocess
import sys

import pytest
import torch

from utils import env_tools, optional_torch
from scripts import install_helper

requires_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="requires a CUDA device")  # may: device


@pytest.fixture
def fake_cuda(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)  # ok
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 8)  # ok
    monkeypatch.setattr(torch.cuda, "max_memory_allocated", lambda *a, **k: 3 * 2**20)  # ok
    yield


@pytest.fixture
def fake_nvidia_smi(tmp_path, monkeypatch):
    binary = tmp_path / "nvidia-smi"  # ok
    binary.write_text("#!/bin/sh\necho 'NVIDIA H100 80GB HBM3, 81559 MiB'\n")  # ok
    binary.chmod(binary.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    return binary


def test_default_device_prefers_accelerator(fake_cuda):
    assert optional_torch.default_device() == "cuda"  # ok


def test_memory_report(fake_cuda):
    assert optional_torch.gpu_memory_mb() == pytest.approx(3.0)


def test_spoofed_availability():
    original = torch.cuda.is_available  # ok
    torch.cuda.is_available = lambda: False  # ok
    try:
        assert optional_torch.default_device() == "cpu"
    finally:
        torch.cuda.is_available = original  # ok


def test_child_env_forwards_visibility(monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "2,3")  # expect: environment
    monkeypatch.delenv("NEURON_RT_VISIBLE_CORES", raising=False)
    env = env_tools.child_env()
    assert env["CUDA_VISIBLE_DEVICES"] == "2,3"  # ok


def test_smi_parsing(fake_nvidia_smi):
    out = subprocess.check_output([str(fake_nvidia_smi)], text=True)
    assert "H100" in out


def test_installer_picks_wheel_index():
    url = install_helper.torch_index_url(cuda="12.1")  # ok
    assert url == "https://download.pytorch.org/whl/cu121"  # ok


def test_oom_message_is_actionable():
    err = RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB")  # ok
    assert "reduce --per_device_train_batch_size" in install_helper.explain(err)


@requires_cuda
def test_real_matmul_on_device():
    a = torch.randn(256, 256, device="cuda")  # expect: device
    b = a @ a.T
    torch.cuda.synchronize()  # expect: device|runtime
    assert b.is_cuda  # may: device


@pytest.mark.skipif(sys.platform != "linux", reason="linux only")
def test_visibility_tuple_contents():
    assert "OMP_NUM_THREADS" in env_tools.VISIBILITY_VARS
