# target: neuron
"""Train a small classifier and export it for inference on the same Trn1 host.

Training uses the XLA device; inference uses torch_neuronx.trace.
"""
import argparse

import torch
import torch_neuronx
import torch_xla.core.xla_model as xm  # expect: runtime
import torch_xla.distributed.parallel_loader as pl  # expect: runtime
from torch_xla.amp import syncfree  # expect: runtime
from torch_neuronx.xla_impl import data_parallel  # may: runtime
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def make_model() -> nn.Module:
    return nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 4))


def train(epochs: int) -> nn.Module:
    device = xm.xla_device()  # may: runtime
    model = make_model().to(device)
    optimizer = syncfree.AdamW(model.parameters(), lr=1e-3)  # may: runtime
    ds = TensorDataset(torch.randn(4096, 64), torch.randint(0, 4, (4096,)))
    loader = pl.MpDeviceLoader(DataLoader(ds, batch_size=64, drop_last=True), device)  # may: runtime
    for _ in range(epochs):
        for x, y in loader:
            optimizer.zero_grad()
            nn.functional.cross_entropy(model(x), y).backward()
            xm.optimizer_step(optimizer)  # may: runtime
            xm.mark_step()  # may: runtime
    return model.cpu()


def data_parallel_export(model: nn.Module, example: torch.Tensor):
    neuron_model = torch_neuronx.trace(model.eval(), example)  # ok
    return data_parallel.DataParallel(neuron_model)  # may: runtime


def export(model: nn.Module, path: str) -> None:
    model.eval()
    example = torch.randn(1, 64)
    traced = torch_neuronx.trace(model, example)  # ok
    torch.jit.save(traced, path)  # ok


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--out", default="classifier_neuron.pt")
    args = parser.parse_args()
    export(train(args.epochs), args.out)
