"""The worker supervisor must hand each process the right environment and command line."""
import os
import subprocess
import sys
from unittest import mock

import pytest

from tools.launch_workers import build_worker_env, render_slurm_script, shell_line, worker_command


def test_each_worker_gets_its_own_rank():
    envs = [build_worker_env(rank=r, world_size=4, base={"PATH": "/usr/bin"}) for r in range(4)]
    assert [e["RANK"] for e in envs] == ["0", "1", "2", "3"]
    assert all(e["WORLD_SIZE"] == "4" for e in envs)


def test_child_sees_restricted_devices():
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="1")  # expect: environment
    out = subprocess.run([sys.executable, "-c", "import os; print(os.environ.get('VISIBLE', ''))"], env=env, capture_output=True, text=True, check=True)
    assert out.returncode == 0


def test_shell_line_is_quoted(monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "4,5")  # expect: environment
    line = shell_line(rank=2, port=8002)
    assert line.endswith("serve_vllm_openai.py --port 8002")
    assert line.startswith("CUDA_VISIBLE_DEVICES=2 ")  # ok


def test_slurm_script_text():
    script = render_slurm_script(nodes=2)
    assert "#SBATCH --nodes=2" in script
    assert "export NCCL_DEBUG=INFO" in script  # ok
    assert "--mixed_precision fp16" not in script  # ok
    assert "MASTER_ADDR" in script  # ok


def test_command_with_spoofed_gpus(monkeypatch):
    torch = pytest.importorskip("torch")
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 8)  # ok
    with mock.patch("torch.cuda.is_available", return_value=True):  # ok
        assert worker_command(rank=0, nproc=8)[:2] == ["torchrun", "--nproc_per_node=8"]


def test_backend_flag_is_not_forwarded():
    cmd = worker_command(rank=1, nproc=2)
    assert "--dist-backend" not in cmd  # ok
    assert "nccl" not in " ".join(cmd)  # ok
