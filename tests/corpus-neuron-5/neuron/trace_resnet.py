# target: neuron
"""Trace torchvision ResNet-50 for inf2 and benchmark it."""
import time

import torch
import torch_neuronx  # may: runtime
import torch_xla.core.xla_model as xm  # expect: runtime
import torchvision.models as models


def trace_on_device():
    model = models.resnet50(weights=models.ResNet50_Weights.DEFAULT).eval()
    device = xm.xla_device()  # may: runtime, device
    model = model.to(device)  # expect-one(trace-resnet): runtime
    example = torch.rand(1, 3, 224, 224, device=device)  # may: runtime
    return torch_neuronx.trace(model, example, compiler_args=["--auto-cast", "matmult"])  # expect-one(trace-resnet): runtime; may: precision


def trace_on_cpu():
    model = models.resnet50(weights=models.ResNet50_Weights.DEFAULT).eval()
    example = torch.rand(1, 3, 224, 224)
    return torch_neuronx.trace(model, example)  # ok


def benchmark(model, n: int = 100) -> float:
    x = torch.rand(1, 3, 224, 224)
    for _ in range(10):
        model(x)
    start = time.perf_counter()
    for _ in range(n):
        model(x)
    return (time.perf_counter() - start) / n * 1000


if __name__ == "__main__":
    neuron_model = trace_on_cpu()
    torch.jit.save(neuron_model, "resnet50_neuron.pt")
    print(f"latency {benchmark(neuron_model):.2f} ms")
