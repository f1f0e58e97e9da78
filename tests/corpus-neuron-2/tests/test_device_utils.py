import os
import socket
import subprocess
import textwrap
from unittest import mock

import pytest

torch = pytest.importorskip("torch")  # ok
import torch.distributed as dist  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402

from mylib.utils import device as device_utils  # noqa: E402

DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")  # expect: device


@pytest.fixture
def fake_cuda(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)  # ok
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 4)  # ok
    yield


@pytest.fixture
def fake_nvidia_smi(tmp_path, monkeypatch):
    script = tmp_path / "nvidia-smi"
    script.write_text(textwrap.dedent("""\
        #!/bin/sh
        echo "GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-3b1f8a2e-0000-0000-0000-000000000000)"
    """))  # ok
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")  # ok
    return script


def test_default_device_type_with_fake_cuda(fake_cuda):
    with mock.patch.object(device_utils, "_current_accelerator_type", return_value="cuda"):  # ok
        assert device_utils.default_device_type() == "cuda"  # ok


def test_cpu_fallback():
    with mock.patch("torch.cuda.is_available", return_value=False):  # ok
        with mock.patch.object(device_utils, "_current_accelerator_type", return_value=None):
            assert device_utils.default_device_type() == "cpu"


def test_spoofed_is_available_is_restored():
    original = torch.cuda.is_available
    torch.cuda.is_available = lambda: True  # ok
    try:
        assert torch.cuda.is_available()  # ok
    finally:
        torch.cuda.is_available = original  # ok


def test_visible_device_ids(monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "1,3")  # expect: environment
    assert device_utils.visible_device_ids("CUDA_VISIBLE_DEVICES") == [1, 3]  # may: environment


def test_gpu_name_from_nvidia_smi(fake_nvidia_smi):
    out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, check=True).stdout  # ok
    assert "NVIDIA A100" in out  # ok


def test_oom_message_is_reported():
    err = device_utils.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")  # ok
    with pytest.raises(RuntimeError, match="CUDA out of memory"):  # ok
        raise err


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _worker(rank: int, world_size: int, port: int) -> None:
    os.environ["MASTER_ADDR"] = "127.0.0.1"  # ok
    os.environ["MASTER_PORT"] = str(port)  # ok
    backend = "nccl" if torch.cuda.device_count() >= world_size else "gloo"  # expect: distributed; may: device
    dist.init_process_group(backend, rank=rank, world_size=world_size)
    if backend == "nccl":  # may: distributed
        torch.cuda.set_device(rank)  # may: device
    t = torch.ones(4) * (rank + 1)
    dist.all_reduce(t)
    assert t.sum().item() == 4 * sum(range(1, world_size + 1))
    dist.destroy_process_group()


@pytest.mark.parametrize("world_size", [2])
def test_all_reduce(world_size):
    mp.spawn(_worker, args=(world_size, _free_port()), nprocs=world_size, join=True)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="requires a CUDA device")  # may: device
def test_pinned_copy_roundtrip():
    torch.cuda.set_device(0)  # may: device
    x = torch.randn(1024).pin_memory()
    y = x.to("cuda", non_blocking=True)  # may: device
    torch.cuda.synchronize()  # may: device, runtime
    assert torch.equal(x, y.cpu())


def test_synchronize_roundtrip():
    x = torch.arange(16, dtype=torch.float32, device=DEVICE)
    device_utils.synchronize(x.device)
    assert x.sum().item() == 120.0
