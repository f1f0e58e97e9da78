"""Tests for tools/install_torch.py: which wheel index the installer picks on each kind of host."""
import subprocess
import sys
from unittest import mock

import pytest

from tools import install_torch

CUDA_INDEX = "https://download.pytorch.org/whl/cu121"  # ok
CPU_INDEX = "https://download.pytorch.org/whl/cpu"
NEURON_INDEX = "https://pip.repos.neuron.amazonaws.com"


@pytest.mark.parametrize(
    "smi_output,expected",
    [
        ("NVIDIA A100-SXM4-80GB, 535.104.05, 12.2", CUDA_INDEX),  # ok
        ("NVIDIA L4, 550.54.15, 12.4", "https://download.pytorch.org/whl/cu124"),  # ok
        ("", CPU_INDEX),
    ],
)
def test_index_follows_nvidia_smi(smi_output, expected):
    with mock.patch.object(subprocess, "run") as run:
        run.return_value = subprocess.CompletedProcess(["nvidia-smi"], 0, stdout=smi_output)  # ok
        assert install_torch.pick_index() == expected


def test_pip_command_on_a_gpu_host(fake_nvidia_smi):
    cmd = install_torch.pip_command("torch==2.3.1")
    assert cmd == [sys.executable, "-m", "pip", "install", "torch==2.3.1", "--index-url", "https://download.pytorch.org/whl/cu121"]  # ok


def test_neuron_host_uses_the_neuron_repository(monkeypatch, tmp_path):
    fake = tmp_path / "neuron-ls"
    fake.write_text("#!/bin/sh\necho 'instance-type: trn1.32xlarge'\n")
    monkeypatch.setattr(install_torch, "which", lambda name: str(fake) if name == "neuron-ls" else None)
    assert install_torch.pick_index() == NEURON_INDEX


def test_dry_run_prints_the_cuda_wheel(capsys, fake_nvidia_smi):
    install_torch.main(["--dry-run", "torch"])
    out = capsys.readouterr().out
    assert "--index-url https://download.pytorch.org/whl/cu121" in out  # ok
    assert "nvidia-cudnn-cu12" not in out  # ok
    assert "torch.version.cuda" not in out  # ok


def test_missing_driver_is_reported(monkeypatch):
    monkeypatch.setattr(install_torch, "which", lambda name: None)
    with pytest.raises(SystemExit, match="no NVIDIA driver found"):  # ok
        install_torch.main(["--require-gpu", "torch"])
