"""Tests for the wheel-selection logic of `python -m installer`.

The driver is never queried for real: `fake_nvidia_smi` (conftest.py)
puts a stub on PATH.
"""
import subprocess
import sys

import pytest

from installer import detect_cuda_version, torch_requirement, wheel_index_url

EXPECTED_INDEX = {
    "11.8": "https://download.pytorch.org/whl/cu118",  # ok
    "12.1": "https://download.pytorch.org/whl/cu121",  # ok
    "12.4": "https://download.pytorch.org/whl/cu124",  # ok
    None: "https://download.pytorch.org/whl/cpu",  # ok
}


@pytest.mark.parametrize("cuda, url", list(EXPECTED_INDEX.items()))
def test_index_url(cuda, url):
    assert wheel_index_url(cuda) == url


def test_detects_cuda_from_nvidia_smi(fake_nvidia_smi):
    assert detect_cuda_version() == "12.2"


def test_no_driver_means_cpu(tmp_path, monkeypatch):
    stub = tmp_path / "nvidia-smi"  # ok
    stub.write_text("#!/bin/sh\necho 'NVIDIA-SMI has failed because it could not communicate with the NVIDIA driver.' >&2\nexit 9\n")  # ok
    stub.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert detect_cuda_version() is None


def test_requirement_pin():
    assert torch_requirement("2.3.1", "12.1") == "torch==2.3.1+cu121"  # ok
    assert torch_requirement("2.3.1", None) == "torch==2.3.1+cpu"  # ok


def test_dry_run_output(fake_nvidia_smi):
    out = subprocess.run(
        [sys.executable, "-m", "installer", "--dry-run"], capture_output=True, text=True, check=True
    ).stdout
    assert "pip install torch==2.3.1+cu121" in out  # ok
    assert "--extra-index-url https://download.pytorch.org/whl/cu121" in out  # ok
