from typing import Optional

import pytest

torch = pytest.importorskip("torch")
F = pytest.importorskip("torch.nn.functional")


def _sync(stream: Optional["torch.cuda.Stream"] = None) -> None:  # ok
    if stream is not None:
        stream.synchronize()


@pytest.fixture(params=["cpu", pytest.param("cuda", marks=pytest.mark.gpu)])  # may: device
def device(request):
    if request.param == "cuda" and not torch.cuda.is_available():  # may: device
        pytest.skip("no GPU")
    return request.param


def test_sdpa_matches_reference(device):
    q, k, v = (torch.randn(2, 4, 16, 32, device=device) for _ in range(3))
    ref = (q @ k.transpose(-2, -1) / 32**0.5).softmax(-1) @ v
    out = F.scaled_dot_product_attention(q, k, v)
    torch.testing.assert_close(out, ref, atol=1e-4, rtol=1e-4)


def test_half_precision_roundtrip():
    x = torch.randn(1024, device="cuda", dtype=torch.float16)  # expect: device
    y = (x.float() * 2).half()
    torch.cuda.synchronize()  # expect: device|runtime
    assert torch.allclose(y.float(), x.float() * 2, atol=1e-2)


def test_peak_memory_tracking():
    torch.cuda.reset_peak_memory_stats()  # expect: device|runtime
    _ = torch.empty(1 << 20, device="cuda")  # expect: device
    assert torch.cuda.max_memory_allocated() >= 4 << 20  # expect: device|runtime
