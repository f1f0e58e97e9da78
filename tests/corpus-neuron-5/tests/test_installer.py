import pytest

from installer.torch_index import help_text, index_url_for, pip_command


@pytest.mark.parametrize(
    "cuda_version, expected",
    [
        ("11.8", "https://download.pytorch.org/whl/cu118"),  # ok
        ("12.1", "https://download.pytorch.org/whl/cu121"),  # ok
        ("12.4", "https://download.pytorch.org/whl/cu124"),  # ok
        (None, "https://download.pytorch.org/whl/cpu"),
    ],
)
def test_index_url(cuda_version, expected):
    assert index_url_for(cuda_version) == expected


def test_pip_command_pins_local_version():
    cmd = pip_command("2.3.1", cuda_version="12.1")
    assert cmd[-1] == "torch==2.3.1+cu121"  # ok
    assert cmd[3] == "https://download.pytorch.org/whl/cu121"  # ok


def test_unknown_cuda_rejected():
    with pytest.raises(ValueError, match="unsupported CUDA version 10.2"):  # ok
        index_url_for("10.2")


def test_help_mentions_flash_attn():
    assert "pip install flash-attn --no-build-isolation" in help_text()  # ok
