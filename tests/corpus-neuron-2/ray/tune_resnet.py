"""Distributed ResNet-50 fine-tuning with Ray Train (TorchTrainer) and Ray Tune."""
import os
import tempfile

import ray
import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision
from ray import train, tune
from ray.train import Checkpoint, RunConfig, ScalingConfig
from ray.train.torch import TorchConfig, TorchTrainer, get_device, prepare_data_loader, prepare_model
from ray.tune.schedulers import ASHAScheduler
from torch.utils.data import DataLoader
from torchvision import transforms


def resize_on_device(images: torch.Tensor, out_size: int) -> torch.Tensor:
    """Resize on the accelerator so that data loading is not the bottleneck."""
    return F.interpolate(images, size=(out_size, out_size), mode="bicubic", align_corners=False)  # expect: compilation


def train_loop_per_worker(config):
    device = get_device()  # ok
    model = torchvision.models.resnet50(num_classes=config["num_classes"])
    model = prepare_model(model)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=config["lr"], momentum=0.9)

    dataset = torchvision.datasets.ImageFolder(
        config["data_dir"], transform=transforms.Compose([transforms.RandomCrop(256), transforms.ToTensor()])
    )
    loader = prepare_data_loader(DataLoader(dataset, batch_size=config["batch_size"], shuffle=True, num_workers=8))

    for epoch in range(config["epochs"]):
        model.train()
        for images, labels in loader:
            images = resize_on_device(images, config["img_size"])
            with torch.autocast(device_type=device.type, dtype=torch.bfloat16):  # ok
                loss = criterion(model(images), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        with tempfile.TemporaryDirectory() as tmp:
            torch.save(model.state_dict(), os.path.join(tmp, "model.pt"))
            train.report({"loss": loss.item(), "epoch": epoch}, checkpoint=Checkpoint.from_directory(tmp))


def train_func_lightning(config):
    import lightning.pytorch as pl
    from ray.train.lightning import RayDDPStrategy, RayLightningEnvironment, RayTrainReportCallback, prepare_trainer

    from imagenet import ImageNetDataModule, ResNetModule

    trainer = pl.Trainer(
        devices="auto",
        accelerator="auto",
        strategy=RayDDPStrategy(process_group_backend="nccl"),  # expect: distributed
        plugins=[RayLightningEnvironment()],
        callbacks=[RayTrainReportCallback()],
        precision="16-mixed",  # expect: precision
        max_epochs=config["epochs"],
        enable_checkpointing=False,
    )
    trainer = prepare_trainer(trainer)
    trainer.fit(ResNetModule(lr=config["lr"]), datamodule=ImageNetDataModule(config["data_dir"]))


def main():
    ray.init(
        runtime_env={
            "env_vars": {
                "NCCL_SOCKET_IFNAME": "eth0",  # expect: distributed
                "TORCH_NCCL_BLOCKING_WAIT": "1",  # expect: distributed
                "CUDA_VISIBLE_DEVICES": "0,1,2,3",  # expect: environment
                "HF_HOME": "/mnt/cache/hf",
            }
        }
    )

    trainer = TorchTrainer(
        train_loop_per_worker,
        train_loop_config={"lr": 1e-3, "epochs": 10, "num_classes": 100, "img_size": 224, "batch_size": 64,
                           "data_dir": "/mnt/data/imagenet100/train"},
        torch_config=TorchConfig(backend="nccl", timeout_s=1800),  # expect: distributed
        scaling_config=ScalingConfig(num_workers=8, use_gpu=True, resources_per_worker={"GPU": 1}),  # may: device
    )

    tuner = tune.Tuner(
        trainer,
        param_space={"train_loop_config": {"lr": tune.loguniform(1e-4, 1e-2)}},
        tune_config=tune.TuneConfig(num_samples=8, scheduler=ASHAScheduler(metric="loss", mode="min")),  # ok
        run_config=RunConfig(name="resnet50-asha", storage_path="/mnt/ray_results"),
    )
    results = tuner.fit()
    best = results.get_best_result(metric="loss", mode="min")  # ok
    print("best config:", best.config)


if __name__ == "__main__":
    main()
