"""
Multi-GPU training of a small regression MLP with the DDP strategy.

    python train_ddp.py                         # 2 GPUs, DDP (the script re-launches itself per GPU)
    torchrun --nproc_per_node 2 train_ddp.py    # or let torchrun do the launching
    python train_ddp.py --accelerator cpu       # DDP over 2 CPU processes (gloo)
"""
import argparse
import json

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

import lightning as L


class WaveRegressor(L.LightningModule):
    def __init__(self, in_dim=8, hidden=64, lr=5e-3):
        super().__init__()
        self.save_hyperparameters()
        self.model = nn.Sequential(nn.Linear(in_dim, hidden), nn.GELU(), nn.Linear(hidden, hidden), nn.GELU(),
                                   nn.Linear(hidden, 1))
        self.loss_fn = nn.SmoothL1Loss()

    def forward(self, x):
        return self.model(x).squeeze(-1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = self.loss_fn(self(x), y)
        self.log("train_loss", loss, on_step=True, on_epoch=True, sync_dist=True)
        return {"loss": loss}

    def validation_step(self, batch, batch_idx):
        x, y = batch
        pred = self(x)
        self.log("val_loss", self.loss_fn(pred, y), sync_dist=True)
        self.log("val_mae", (pred - y).abs().mean(), sync_dist=True)

    def configure_optimizers(self):
        opt = torch.optim.AdamW(self.parameters(), lr=self.hparams.lr, weight_decay=1e-2)
        sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=self.trainer.max_epochs)
        return [opt], [sched]


def make_loaders(batch_size):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(1024, 8)).astype(np.float32)
    y = (np.sin(x[:, 0] * 2) + 0.5 * x[:, 1] * x[:, 2] + 0.1 * rng.normal(size=1024)).astype(np.float32)
    x, y = torch.from_numpy(x), torch.from_numpy(y)
    train = TensorDataset(x[:896], y[:896])
    val = TensorDataset(x[896:], y[896:])
    return (DataLoader(train, batch_size=batch_size, shuffle=True, pin_memory=True, drop_last=True),
            DataLoader(val, batch_size=128, pin_memory=True))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--accelerator", default="gpu")
    parser.add_argument("--devices", type=int, default=2)
    parser.add_argument("--strategy", default="ddp")
    parser.add_argument("--precision", default="32-true")
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--batch-size", type=int, default=64, help="per device")
    args = parser.parse_args()

    L.seed_everything(42)
    train_loader, val_loader = make_loaders(args.batch_size)
    model = WaveRegressor()
    trainer = L.Trainer(accelerator=args.accelerator, devices=args.devices, strategy=args.strategy,
                        precision=args.precision, max_epochs=args.epochs, enable_checkpointing=True,
                        default_root_dir="ddp_runs")
    trainer.fit(model, train_dataloaders=train_loader, val_dataloaders=val_loader)

    if trainer.is_global_zero:
        w = model.model[0].weight.detach().float().cpu()
        print("RESULT " + json.dumps({
            "val_loss": round(float(trainer.callback_metrics["val_loss"]), 6),
            "val_mae": round(float(trainer.callback_metrics["val_mae"]), 6),
            "train_loss": round(float(trainer.callback_metrics["train_loss"]), 6),
            "w00": round(w[0, 0].item(), 6),
            "global_step": trainer.global_step,
        }))


if __name__ == "__main__":
    main()
