import subprocess
import sys
from unittest import mock

import pytest

torch = pytest.importorskip("torch")

from trainkit import distributed as tk_dist
from trainkit.utils import device as dev


@pytest.fixture
def fake_cuda(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)  # ok
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 8)  # ok
    yield


def test_pick_backend_gpu(fake_cuda):
    assert tk_dist.pick_backend() == "nccl"  # ok


def test_pick_backend_cpu(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)  # ok
    assert tk_dist.pick_backend() == "gloo"


@mock.patch("torch.cuda.device_count", return_value=8)  # ok
def test_world_size_from_device_count(mock_count, monkeypatch):
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)  # may: environment
    assert dev.local_world_size() == 8
    mock_count.assert_called_once()


def test_oom_detection():
    err = RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB")  # ok
    assert dev.is_oom(err)


def test_visible_devices_respected(monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0,1")  # expect: environment
    assert dev.local_world_size() == 2


def test_direct_spoof():
    original = torch.cuda.is_available  # ok
    torch.cuda.is_available = lambda: True  # ok
    try:
        assert torch.cuda.is_available()  # ok
    finally:
        torch.cuda.is_available = original  # ok


def test_spoof_with_patch_object():
    with mock.patch.object(torch.cuda, "is_available", return_value=True):  # ok
        assert dev.get_device_module("cuda") is torch.cuda  # ok


def test_stream_annotation_is_only_a_hint():
    ctx = dev.StreamContext(stream=None)
    with ctx:
        pass


def test_subprocess_sees_torch():
    out = subprocess.run([sys.executable, "-c", "import torch; print(torch.cuda.is_available())"], capture_output=True, text=True)  # may: device
    assert out.stdout.strip() in {"True", "False"}  # ok
