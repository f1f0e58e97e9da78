import os
import stat
import textwrap

import pytest

from trainkit.utils.probe import query_gpus

FAKE_SMI = textwrap.dedent(
    """\
    #!/bin/sh
    echo "0, NVIDIA A100-SXM4-80GB, 81920"
    echo "1, NVIDIA A100-SXM4-80GB, 81920"
    """
)  # ok


@pytest.fixture
def fake_nvidia_smi(tmp_path, monkeypatch):
    exe = tmp_path / "nvidia-smi"  # ok
    exe.write_text(FAKE_SMI)
    exe.chmod(exe.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    return exe


def test_query_gpus_parses_fake_smi(fake_nvidia_smi):
    gpus = query_gpus()
    assert [g.name for g in gpus] == ["NVIDIA A100-SXM4-80GB"] * 2  # ok
    assert gpus[0].memory_mb == 81920


def test_query_gpus_without_driver(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    assert query_gpus() == []


def test_failing_smi(tmp_path, monkeypatch):
    exe = tmp_path / "nvidia-smi"  # ok
    exe.write_text("#!/bin/sh\necho 'NVIDIA-SMI has failed because it could not communicate with the NVIDIA driver.' >&2\nexit 9\n")  # ok
    exe.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert query_gpus() == []
