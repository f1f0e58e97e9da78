# target: xla
"""Trace ResNet-50 for Inf2 the documented way: fp32 model on the CPU, traced once, loaded per NeuronCore. Nothing to report."""
import time

import torch
import torch_neuronx
from torchvision.models import ResNet50_Weights, resnet50


def build(path: str = "resnet50_neuron.pt") -> None:
    model = resnet50(weights=ResNet50_Weights.DEFAULT).eval()  # ok
    example = torch.rand(1, 3, 224, 224)  # ok
    neuron_model = torch_neuronx.trace(model, example)  # ok
    torch.jit.save(neuron_model, path)  # ok


def benchmark(path: str = "resnet50_neuron.pt", iters: int = 1000) -> float:
    model = torch.jit.load(path)  # ok
    model = torch_neuronx.DataParallel(model)  # ok
    batch = torch.rand(2, 3, 224, 224)
    for _ in range(10):
        model(batch)
    start = time.perf_counter()
    for _ in range(iters):
        model(batch)
    latency_ms = (time.perf_counter() - start) * 1000 / iters
    return float(torch.tensor(latency_ms, dtype=torch.float64))  # ok


if __name__ == "__main__":
    build()
    print(f"{benchmark():.2f} ms/batch")
