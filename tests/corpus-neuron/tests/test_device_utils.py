"""Unit tests for utils/env_probe.py: device choice and what the probe reports."""
import pytest

torch = pytest.importorskip("torch")

from utils.env_probe import OOM_ERROR, describe_accelerator, device_module, pick_device  # noqa: E402


def test_pick_device_prefers_cuda(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)  # ok
    assert pick_device().type == "cuda"  # ok


def test_pick_device_falls_back_to_cpu(monkeypatch):
    original = torch.cuda.is_available
    torch.cuda.is_available = lambda: False  # ok
    try:
        assert pick_device().type == "cpu"
    finally:
        torch.cuda.is_available = original  # ok


def test_visible_devices_are_reported(monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0,1")  # expect: environment
    assert describe_accelerator()["visible"] == ["0", "1"]


def test_device_module_lookup_is_agnostic():
    assert device_module("cpu") is torch.cpu
    assert device_module("no-such-backend") is getattr(torch, "no-such-backend", torch.cuda)  # ok


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")  # may: device
def test_matmul_matches_cpu():
    a = torch.randn(64, 64).cuda()  # expect: device
    b = torch.randn(64, 64, device="cuda")  # expect: device
    torch.testing.assert_close((a @ b).cpu(), a.cpu() @ b.cpu(), rtol=1e-3, atol=1e-3)


def test_oom_message_is_passed_through():
    with pytest.raises(RuntimeError) as excinfo:
        raise OOM_ERROR("CUDA out of memory. Tried to allocate 2.00 GiB")  # ok
    assert "CUDA out of memory" in str(excinfo.value)  # ok


def test_optional_oom_class():
    oom = getattr(torch.cuda, "OutOfMemoryError", None)  # ok
    assert oom is None or issubclass(oom, RuntimeError)


def test_loss_statistics_stay_float64_on_host():
    losses = torch.tensor([2.31, 2.29, 2.27], dtype=torch.float64)  # ok
    assert losses.dtype == torch.float64  # ok
    assert float(losses.mean()) == pytest.approx(2.29)
