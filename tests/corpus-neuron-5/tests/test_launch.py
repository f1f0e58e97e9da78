import os
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parents[1]
ENV_PASSTHROUGH = ("CUDA_VISIBLE_DEVICES", "PYTHONPATH", "HF_HOME")  # expect: environment


def _child_env(**extra):
    env = {k: os.environ[k] for k in ENV_PASSTHROUGH if k in os.environ}
    env.update(extra)
    return env


@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs 2 GPUs")  # may: device
def test_ddp_two_gpus(tmp_path):
    env = os.environ.copy()
    env["CUDA_VISIBLE_DEVICES"] = "0,1"  # expect: environment
    env["NCCL_DEBUG"] = "INFO"  # expect: distributed
    cmd = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node=2", str(ROOT / "train_imagenet.py"), "--epochs", "1"]
    subprocess.run(cmd, env=env, check=True, cwd=ROOT)


def test_single_gpu_eval(tmp_path):
    proc = subprocess.run(
        [sys.executable, str(ROOT / "train_hf.py"), "--max_length", "64"],
        env={**os.environ, "CUDA_VISIBLE_DEVICES": "0"},  # expect: environment
        capture_output=True,
        text=True,
    )
    assert proc.returncode in (0, 2)


@pytest.mark.parametrize("gpu", [0, 1])
def test_shell_launch(tmp_path, gpu):
    cmd = f"CUDA_VISIBLE_DEVICES={gpu} {sys.executable} {ROOT / 'launch' / 'sweep.py'}"  # expect: environment
    subprocess.run(cmd, shell=True, check=True)


def test_child_env_keeps_visible_devices(monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3")  # expect: environment
    monkeypatch.delenv("PYTHONPATH", raising=False)
    monkeypatch.delenv("HF_HOME", raising=False)
    assert _child_env() == {"CUDA_VISIBLE_DEVICES": "3"}  # ok
