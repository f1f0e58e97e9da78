import json
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

from lightning import LightningDataModule, LightningModule, Trainer, seed_everything

torch.set_float32_matmul_precision("medium")

BATCH_SIZE = 64 if torch.cuda.is_available() else 16
NUM_WORKERS = int(os.cpu_count() / 2)


class ShapesDataModule(LightningDataModule):
    """3-channel 16x16 images of four synthetic 'shapes' (squares, bars, crosses, dots)."""

    def __init__(self, batch_size=BATCH_SIZE, num_workers=0):
        super().__init__()
        self.batch_size = batch_size
        self.num_workers = num_workers

    @staticmethod
    def _make(n, seed):
        g = torch.Generator().manual_seed(seed)
        y = torch.randint(0, 4, (n,), generator=g)
        x = 0.9 * torch.randn(n, 3, 16, 16, generator=g)
        for i in range(n):
            c = int(y[i])
            if c == 0:
                x[i, :, 4:12, 4:12] += 1.0
            elif c == 1:
                x[i, :, :, 7:9] += 1.0
            elif c == 2:
                x[i, :, 7:9, :] += 1.0
                x[i, :, :, 7:9] += 1.0
            else:
                x[i, :, ::4, ::4] += 1.5
        return TensorDataset(x, y)

    def setup(self, stage=None):
        self.train_ds = self._make(640, 0)
        self.val_ds = self._make(160, 1)
        self.test_ds = self._make(160, 2)

    def train_dataloader(self):
        return DataLoader(self.train_ds, batch_size=self.batch_size, shuffle=True,
                          num_workers=self.num_workers, pin_memory=True)

    def val_dataloader(self):
        return DataLoader(self.val_ds, batch_size=self.batch_size, num_workers=self.num_workers, pin_memory=True)

    def test_dataloader(self):
        return DataLoader(self.test_ds, batch_size=self.batch_size, num_workers=self.num_workers, pin_memory=True)


class LitClassifier(LightningModule):
    def __init__(self, lr=0.05, num_classes=4):
        super().__init__()
        self.save_hyperparameters()
        self.net = nn.Sequential(
            nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
            nn.AdaptiveAvgPool2d(1), nn.Flatten(),
            nn.Linear(32, num_classes),
        )

    def forward(self, x):
        return F.log_softmax(self.net(x), dim=1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        logits = self(x)
        loss = F.nll_loss(logits, y)
        self.log("train_loss", loss)
        return loss

    def evaluate(self, batch, stage=None):
        x, y = batch
        logits = self(x)
        loss = F.nll_loss(logits, y)
        preds = torch.argmax(logits, dim=1)
        acc = (preds == y).float().mean()
        if stage:
            self.log(f"{stage}_loss", loss, prog_bar=True)
            self.log(f"{stage}_acc", acc, prog_bar=True)

    def validation_step(self, batch, batch_idx):
        self.evaluate(batch, "val")

    def test_step(self, batch, batch_idx):
        self.evaluate(batch, "test")

    def configure_optimizers(self):
        optimizer = torch.optim.SGD(self.parameters(), lr=self.hparams.lr, momentum=0.9, weight_decay=5e-4)
        scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)
        return {"optimizer": optimizer, "lr_scheduler": {"scheduler": scheduler, "interval": "epoch"}}


if __name__ == "__main__":
    seed_everything(7)
    dm = ShapesDataModule()
    model = LitClassifier(lr=0.05)

    trainer = Trainer(
        max_epochs=3,
        accelerator="cuda",
        devices=1,
        precision=16,
        benchmark=True,
        default_root_dir="lightning_logs",
    )
    trainer.fit(model, datamodule=dm)
    test_metrics = trainer.test(model, datamodule=dm)[0]
    print(f"max memory: {torch.cuda.max_memory_allocated() / 2**20:.1f} MiB")
    print("RESULT " + json.dumps({
        "val_acc": round(float(trainer.callback_metrics["val_acc"]), 5),
        "test_acc": round(test_metrics["test_acc"], 5),
        "test_loss": round(test_metrics["test_loss"], 5),
    }))
