import subprocess
import sys

import pytest
import torch

from utils.device import SUPPORTED_ACCELERATORS, device_module, resolve_accelerator
from utils.launcher import remote_command, worker_env


def test_gpu_alias_resolves_to_cuda(fake_gpu):
    assert resolve_accelerator("GPU") == "cuda"  # ok


def test_unknown_accelerator_is_rejected():
    with pytest.raises(ValueError, match="accelerator must be one of"):
        resolve_accelerator("tpu")
    assert "cuda" in SUPPORTED_ACCELERATORS  # ok


def test_is_available_spoof_restores():
    original = torch.cuda.is_available  # ok
    torch.cuda.is_available = lambda: True  # ok
    try:
        assert torch.cuda.is_available()  # ok
    finally:
        torch.cuda.is_available = original  # ok


def test_device_module_falls_back_to_cuda():
    assert device_module("does_not_exist") is torch.cuda  # ok
    assert device_module("cpu") is torch.cpu


def test_worker_env_sets_visible_devices(monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0,1,2,3")  # expect: environment
    env = worker_env(3)
    assert env["CUDA_VISIBLE_DEVICES"] == "3"  # ok


def test_remote_command_text():
    cmd = remote_command("node7", 1, "train.py", ["--lr", "1e-3"])
    assert cmd == "ssh node7 CUDA_VISIBLE_DEVICES=1 python train.py --lr 1e-3"  # ok


def test_nvidia_smi_is_faked(fake_nvidia_smi):
    out = subprocess.run(["nvidia-smi"], capture_output=True, text=True, check=True).stdout  # ok
    assert "CUDA Version: 12.2" in out  # ok


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="requires a CUDA GPU")  # may: device
def test_pinned_copy_roundtrip():
    x = torch.arange(16, dtype=torch.float32).pin_memory()  # may: device
    y = x.to("cuda", non_blocking=True)  # expect: device
    torch.cuda.synchronize()  # expect: device|runtime
    assert torch.equal(y.cpu(), x)


def test_cli_help_mentions_cuda():
    out = subprocess.run([sys.executable, "pipelines/sd_img2img.py", "--help"], capture_output=True, text=True).stdout
    assert "CUDA only" in out  # ok
