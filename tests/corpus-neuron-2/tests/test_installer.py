"""Tests for scripts/install_torch.py, which picks the wheel index for the host."""
import pytest

from scripts import install_torch


@pytest.mark.parametrize(
    "cuda_version, expected",
    [
        ("12.1", "https://download.pytorch.org/whl/cu121"),  # ok
        ("11.8", "https://download.pytorch.org/whl/cu118"),  # ok
        (None, "https://download.pytorch.org/whl/cpu"),  # ok
    ],
)
def test_index_url(cuda_version, expected):
    assert install_torch.index_url(cuda_version) == expected


def test_pip_command_pins_local_version(monkeypatch):
    monkeypatch.setattr(install_torch, "detect_cuda_version", lambda: "12.1")  # ok
    cmd = install_torch.pip_command("2.3.1")
    assert cmd == [
        "pip", "install", "torch==2.3.1+cu121",  # ok
        "--index-url", "https://download.pytorch.org/whl/cu121",  # ok
    ]


def test_detect_cuda_version_parses_nvidia_smi(monkeypatch):
    fake_output = "NVIDIA-SMI 535.104.05   Driver Version: 535.104.05   CUDA Version: 12.2"  # ok
    monkeypatch.setattr(install_torch, "_run", lambda *a, **k: fake_output)  # ok
    assert install_torch.detect_cuda_version() == "12.2"  # ok


def test_neuron_host_uses_neuron_repo(monkeypatch, tmp_path):
    (tmp_path / "neuron0").touch()
    monkeypatch.setattr(install_torch, "DEV_DIR", tmp_path)
    assert install_torch.index_url(None, neuron=True) == "https://pip.repos.neuron.amazonaws.com"  # ok


def test_unsupported_cuda_message():
    with pytest.raises(RuntimeError, match="CUDA 10.2 is no longer supported"):  # ok
        install_torch.index_url("10.2")
