import argparse

import lightning as L
import torch
import torch.nn.functional as F
from lightning.pytorch.callbacks import LearningRateMonitor, ModelCheckpoint
from lightning.pytorch.strategies import DDPStrategy
from torch import nn


class TokenTagger(L.LightningModule):
    """Sequence tagger that only scores non-padding tokens."""

    def __init__(self, vocab_size=32000, dim=512, num_tags=17, pad_id=0, lr=1e-3):
        super().__init__()
        self.save_hyperparameters()
        self.embed = nn.Embedding(vocab_size, dim, padding_idx=pad_id)
        self.encoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(dim, 8, batch_first=True), num_layers=4)
        self.classifier = nn.Linear(dim, num_tags)

    def forward(self, tokens, tags=None):
        keep = tokens != self.hparams.pad_id
        h = self.encoder(self.embed(tokens), src_key_padding_mask=~keep)
        h = h[keep]  # expect: compilation
        logits = self.classifier(h)
        if tags is None:
            return logits
        return F.cross_entropy(logits, tags[keep])  # expect: compilation

    def training_step(self, batch, batch_idx):
        loss = self(batch["tokens"], batch["tags"])
        self.log("train_loss", loss, prog_bar=True)
        return loss

    def validation_step(self, batch, batch_idx):
        tokens, tags = batch["tokens"], batch["tags"]
        logits = self.classifier(self.encoder(self.embed(tokens)))
        pred = logits.argmax(-1)
        valid = tokens != self.hparams.pad_id
        acc = (pred[valid] == tags[valid]).float().mean()  # ok
        pred = torch.where(valid, pred, torch.full_like(pred, -1))  # ok
        self.log("val_acc", acc, sync_dist=True)

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=self.hparams.lr)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--devices", type=int, default=8)
    parser.add_argument("--num_nodes", type=int, default=1)
    parser.add_argument("--precision", default="16-mixed")  # expect-any(lit_prec): precision
    args = parser.parse_args()

    from data import TaggingDataModule

    trainer = L.Trainer(
        accelerator="gpu",  # may: device
        devices=args.devices,
        num_nodes=args.num_nodes,
        strategy=DDPStrategy(process_group_backend="nccl", find_unused_parameters=False),  # expect: distributed
        precision=args.precision,  # expect-any(lit_prec): precision
        max_epochs=20,
        gradient_clip_val=1.0,
        callbacks=[ModelCheckpoint(monitor="val_acc", mode="max"), LearningRateMonitor()],
    )
    trainer.fit(TokenTagger(), datamodule=TaggingDataModule(batch_size=32))

    # export a full-precision copy for the evaluation team
    eval_trainer = L.Trainer(accelerator="cpu", devices=1, precision="32-true")  # ok
    eval_trainer.validate(TokenTagger(), datamodule=TaggingDataModule(batch_size=64))


if __name__ == "__main__":
    main()
