"""Distributed training with Ray Train's TorchTrainer.

    python train/ray_train.py --num-workers 16
"""
import argparse
import tempfile

import ray.train
import torch
from ray.train import CheckpointConfig, RunConfig, ScalingConfig
from ray.train.torch import TorchConfig, TorchTrainer, prepare_data_loader, prepare_model
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def train_loop_per_worker(config: dict) -> None:
    model = prepare_model(nn.Sequential(nn.Linear(128, 256), nn.ReLU(), nn.Linear(256, 1)))  # ok
    ds = TensorDataset(torch.randn(8192, 128), torch.randn(8192, 1))
    loader = prepare_data_loader(DataLoader(ds, batch_size=config["batch_size"], shuffle=True))  # ok
    optimizer = torch.optim.Adam(model.parameters(), lr=config["lr"])
    for epoch in range(config["epochs"]):
        total = 0.0
        for x, y in loader:
            loss = nn.functional.mse_loss(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.item()
        with tempfile.TemporaryDirectory() as tmp:
            torch.save(model.state_dict(), f"{tmp}/model.pt")
            ray.train.report({"loss": total, "epoch": epoch}, checkpoint=ray.train.Checkpoint.from_directory(tmp))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--num-workers", type=int, default=4)
    parser.add_argument("--epochs", type=int, default=5)
    args = parser.parse_args()

    trainer = TorchTrainer(
        train_loop_per_worker,
        train_loop_config={"lr": 1e-3, "batch_size": 64, "epochs": args.epochs},
        torch_config=TorchConfig(backend="nccl", timeout_s=1800),  # expect: distributed
        scaling_config=ScalingConfig(num_workers=args.num_workers, use_gpu=True, resources_per_worker={"GPU": 1}),  # may: device
        run_config=RunConfig(
            name="ray-ddp",
            checkpoint_config=CheckpointConfig(num_to_keep=2, checkpoint_score_attribute="loss", checkpoint_score_order="min"),  # ok
        ),
    )
    result = trainer.fit()
    print(result.metrics)


if __name__ == "__main__":
    main()
