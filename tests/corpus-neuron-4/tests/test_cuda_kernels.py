"""Numerics of the fused normalisation kernel against the eager reference."""
import pytest

torch = pytest.importorskip("torch")
fastnorm = pytest.importorskip("fastnorm")

requires_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="CUDA not available")  # may: device


@requires_cuda
@pytest.mark.parametrize("hidden", [768, 1024, 4096])
def test_fused_layer_norm_matches_eager(hidden):
    x = torch.randn(8, hidden, device="cuda", dtype=torch.float16)  # expect: device; may: precision
    ref = torch.nn.functional.layer_norm(x.float(), (hidden,))
    out = fastnorm.fused_layer_norm(x, (hidden,))
    torch.cuda.synchronize()  # expect: device|runtime
    torch.testing.assert_close(out.float(), ref, atol=1e-2, rtol=1e-2)


@requires_cuda
def test_peak_memory_is_bounded():
    torch.cuda.reset_peak_memory_stats()  # expect: device|runtime
    x = torch.randn(1024, 4096).cuda()  # expect: device
    fastnorm.fused_layer_norm(x, (4096,))
    assert torch.cuda.max_memory_allocated() < 2**30  # expect: device|runtime


def test_cpu_reference_in_double():
    x = torch.randn(16, 32, dtype=torch.float64)  # ok
    ref = torch.nn.functional.layer_norm(x, (32,))
    assert ref.dtype == torch.float64  # ok
    torch.testing.assert_close(ref.mean(-1), torch.zeros(16, dtype=torch.float64), atol=1e-12, rtol=0)  # ok
