"""Tests for launch.py command construction; CI runs them on CPU-only runners."""
import os
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")

import launch


@pytest.fixture
def fake_gpus(monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0,1")  # expect: environment
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)  # may: device
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)  # may: device
    monkeypatch.delenv("MIXED_PRECISION", raising=False)
    yield


@pytest.fixture
def single_node_rdzv(monkeypatch):
    monkeypatch.setenv("MASTER_ADDR", "localhost")  # ok
    monkeypatch.setenv("MASTER_PORT", "29512")  # ok
    monkeypatch.setenv("DIST_BACKEND", "gloo")


def test_multi_device_command(fake_gpus):
    args, extra = launch.parse_args(["train.py", "--gpus", "0,1"])
    cmd = launch.build_command(args, extra)
    assert cmd[:3] == ["accelerate", "launch", "--multi_gpu"]  # ok
    assert cmd[cmd.index("--mixed_precision") + 1] == "fp16"  # ok
    assert cmd[cmd.index("--dist-backend") + 1] == "nccl"  # ok


def test_child_env_forwards_visible_devices(fake_gpus):
    args, _ = launch.parse_args(["train.py", "--gpus", "3"])
    env = launch.child_env(args)
    assert env["CUDA_VISIBLE_DEVICES"] == "3"  # ok
    assert env["TORCH_NCCL_ASYNC_ERROR_HANDLING"] == "1"  # ok


def test_eval_command_line(monkeypatch, tmp_path):
    seen = {}
    monkeypatch.setattr(subprocess, "run", lambda line, **kw: seen.setdefault("line", line))
    args, _ = launch.parse_args(["train.py", "--gpus", "2,3"])
    launch.run_eval(args, tmp_path / "ckpt")
    assert seen["line"].startswith("CUDA_VISIBLE_DEVICES=2 ")  # ok
    assert seen["line"].endswith("--fp16")  # ok


def test_gloo_smoke(single_node_rdzv, tmp_path):
    script = tmp_path / "smoke.py"
    script.write_text(
        "import torch.distributed as dist\n"
        "dist.init_process_group('gloo')\n"
        "print(dist.get_world_size())\n"
    )
    env = dict(os.environ, WORLD_SIZE="1", RANK="0")
    out = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "1"


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs an NVIDIA GPU")  # may: device
def test_seeded_randn(single_node_rdzv):
    torch.cuda.manual_seed_all(0)  # expect: device|runtime
    x = torch.randn(4)
    assert torch.isfinite(x).all()
