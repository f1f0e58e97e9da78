"""Distributed ResNet-50 training on a Ray cluster."""
import os

import ray
import torch
from ray.train import RunConfig, ScalingConfig
from ray.train.torch import TorchConfig, TorchTrainer

BACKENDS = {"gpu": "nccl", "cpu": "gloo"}  # expect: distributed
NUM_WORKERS = int(os.getenv("NUM_WORKERS", "8"))
USE_GPU = os.getenv("USE_GPU", "1") == "1"


def train_loop_per_worker(config):
    import ray.train.torch
    import torchvision

    model = ray.train.torch.prepare_model(torchvision.models.resnet50())
    optimizer = torch.optim.SGD(model.parameters(), lr=config["lr"], momentum=0.9)
    scaler = torch.cuda.amp.GradScaler(enabled=config["amp"])  # expect: precision; may: device
    loader = ray.train.torch.prepare_data_loader(build_loader(config["batch_size"]))
    for epoch in range(config["epochs"]):
        for images, labels in loader:
            with torch.autocast(device_type="cuda", dtype=torch.float16, enabled=config["amp"]):  # expect: precision; may: device
                loss = torch.nn.functional.cross_entropy(model(images), labels)
            optimizer.zero_grad()
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
        ray.train.report({"epoch": epoch, "loss": loss.item()})


def build_loader(batch_size):
    from torch.utils.data import DataLoader
    from torchvision.datasets import FakeData
    from torchvision.transforms import ToTensor

    return DataLoader(FakeData(size=10_000, transform=ToTensor()), batch_size=batch_size, shuffle=True)


if __name__ == "__main__":
    ray.init()
    scaling = ScalingConfig(num_workers=NUM_WORKERS, use_gpu=USE_GPU, resources_per_worker={"GPU": 1, "CPU": 8})  # may: device
    torch_config = TorchConfig(backend="nccl", timeout_s=1800)  # expect: distributed
    fallback_config = TorchConfig(backend=BACKENDS["gpu" if USE_GPU else "cpu"])  # may: distributed
    trainer = TorchTrainer(
        train_loop_per_worker,
        train_loop_config={"lr": 0.1, "epochs": 10, "batch_size": 64, "amp": True},  # may: precision
        scaling_config=scaling,
        torch_config=torch_config if USE_GPU else fallback_config,
        run_config=RunConfig(name="resnet50-ray"),
    )
    print(trainer.fit().metrics)
