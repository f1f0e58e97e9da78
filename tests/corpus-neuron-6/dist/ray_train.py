import os
import tempfile

import ray.train
import ray.train.torch
import torch
from ray.train import Checkpoint, RunConfig, ScalingConfig
from ray.train.torch import TorchConfig, TorchTrainer
from torch import nn


def train_func(config):
    model = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 1))
    model = ray.train.torch.prepare_model(model)
    optimizer = torch.optim.Adam(model.parameters(), lr=config["lr"])
    ds = torch.utils.data.TensorDataset(torch.randn(8192, 64), torch.randn(8192, 1))
    loader = ray.train.torch.prepare_data_loader(torch.utils.data.DataLoader(ds, batch_size=128, shuffle=True))
    for epoch in range(config["epochs"]):
        if ray.train.get_context().get_world_size() > 1:
            loader.sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.mse_loss(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        with tempfile.TemporaryDirectory() as d:
            torch.save(model.state_dict(), os.path.join(d, "model.pt"))
            ray.train.report({"loss": loss.item(), "epoch": epoch}, checkpoint=Checkpoint.from_directory(d))


def main():
    trainer = TorchTrainer(
        train_func,
        train_loop_config={"lr": 1e-3, "epochs": 10},
        scaling_config=ScalingConfig(num_workers=8, use_gpu=True, resources_per_worker={"GPU": 1}),  # may: device
        torch_config=TorchConfig(backend="nccl", timeout_s=1800),  # expect: distributed
        run_config=RunConfig(name="mlp-regression", storage_path="s3://my-bucket/ray-results"),
    )
    result = trainer.fit()
    print(result.metrics)


if __name__ == "__main__":
    main()
