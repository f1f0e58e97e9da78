"""
LightningModule autoencoder on synthetic 12x12 "digits".

    python train_autoencoder.py                                   # 1 GPU, 16-bit mixed precision
    python train_autoencoder.py --accelerator cpu --precision 32  # CPU
"""
import json
from argparse import ArgumentParser

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset, random_split

import lightning as L


class LitAutoEncoder(L.LightningModule):
    def __init__(self, hidden_dim: int = 32, learning_rate: float = 1e-3):
        super().__init__()
        self.save_hyperparameters()
        self.encoder = nn.Sequential(nn.Linear(12 * 12, 64), nn.ReLU(), nn.Linear(64, hidden_dim))
        self.decoder = nn.Sequential(nn.Linear(hidden_dim, 64), nn.ReLU(), nn.Linear(64, 12 * 12))

    def forward(self, x):
        # in lightning, forward defines the prediction/inference actions
        return self.encoder(x)

    def training_step(self, batch, batch_idx):
        x, _ = batch
        x = x.view(x.size(0), -1)
        z = self.encoder(x)
        x_hat = self.decoder(z)
        loss = F.mse_loss(x_hat, x)
        self.log("train_loss", loss)
        return loss

    def validation_step(self, batch, batch_idx):
        x, _ = batch
        x = x.view(x.size(0), -1)
        x_hat = self.decoder(self.encoder(x))
        self.log("val_loss", F.mse_loss(x_hat, x), prog_bar=True)

    def test_step(self, batch, batch_idx):
        x, _ = batch
        x = x.view(x.size(0), -1)
        x_hat = self.decoder(self.encoder(x))
        self.log("test_loss", F.mse_loss(x_hat, x))

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.hparams.learning_rate)


def synthetic_digits(n, seed):
    g = torch.Generator().manual_seed(seed)
    protos = torch.rand(10, 12, 12, generator=torch.Generator().manual_seed(42)).round()
    y = torch.randint(0, 10, (n,), generator=g)
    x = (protos[y] * 0.8 + 0.2 * torch.rand(n, 12, 12, generator=g)).unsqueeze(1)
    return TensorDataset(x, y)


def cli_main():
    parser = ArgumentParser()
    parser.add_argument("--accelerator", default="gpu")
    parser.add_argument("--devices", default=1, type=int)
    parser.add_argument("--precision", default="16-mixed")
    parser.add_argument("--max_epochs", default=4, type=int)
    parser.add_argument("--batch_size", default=32, type=int)
    parser.add_argument("--hidden_dim", type=int, default=32)
    parser.add_argument("--learning_rate", type=float, default=2e-3)
    args = parser.parse_args()

    L.seed_everything(1234)

    # ------------
    # data
    # ------------
    dataset = synthetic_digits(1000, seed=0)
    test_set = synthetic_digits(200, seed=1)
    train_set, val_set = random_split(dataset, [800, 200], generator=torch.Generator().manual_seed(1234))

    train_loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=True, pin_memory=True)
    val_loader = DataLoader(val_set, batch_size=args.batch_size)
    test_loader = DataLoader(test_set, batch_size=args.batch_size)

    # ------------
    # model
    # ------------
    model = LitAutoEncoder(args.hidden_dim, args.learning_rate)

    # ------------
    # training
    # ------------
    precision = int(args.precision) if args.precision.isdigit() else args.precision
    trainer = L.Trainer(accelerator=args.accelerator, devices=args.devices, precision=precision,
                        max_epochs=args.max_epochs, log_every_n_steps=10)
    trainer.fit(model, train_loader, val_loader)

    # ------------
    # testing
    # ------------
    result = trainer.test(model, dataloaders=test_loader)
    print(result)
    with torch.no_grad():
        z = model(test_set.tensors[0][:2].view(2, -1).to(model.device)).float().cpu()
    print("RESULT " + json.dumps({
        "val_loss": round(float(trainer.callback_metrics["val_loss"]), 6),
        "test_loss": round(result[0]["test_loss"], 6),
        "code": [round(v, 5) for v in z[0, :4].tolist()],
    }))


if __name__ == "__main__":
    cli_main()
