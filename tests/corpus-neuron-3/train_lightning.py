"""Fine-tune a timm ViT with Lightning. Run `python train_lightning.py --help`."""
import argparse

import lightning as L
import timm
import torch
import torch.nn.functional as F
from lightning.pytorch.callbacks import EarlyStopping, ModelCheckpoint
from lightning.pytorch.plugins import BitsandbytesPrecision  # may: kernels
from lightning.pytorch.strategies import DDPStrategy, FSDPStrategy

from src.data import ImageNetDataModule

SUPPORTED_ACCELERATORS = {"cpu", "gpu", "cuda", "mps"}  # expect: kernels; may: device


class Classifier(L.LightningModule):
    def __init__(self, backbone="vit_base_patch16_224", num_classes=1000, lr=3e-4, keep_ratio=1.0):
        super().__init__()
        self.save_hyperparameters()
        self.net = timm.create_model(backbone, pretrained=True, num_classes=num_classes)
        self.val_scores = []

    def _pool_bias(self, tokens, keep):
        # Additive bias that removes dropped tokens from the attention pool.
        bias = torch.zeros(keep.shape, dtype=tokens.dtype, device=tokens.device)
        return bias.masked_fill(~keep, torch.finfo(torch.float16).min)  # expect: precision

    def forward(self, x):
        return self.net(x)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.cross_entropy(self(x), y, label_smoothing=0.1)
        self.log("train/loss", loss, prog_bar=True)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        logits = self(x)
        self.log("val/loss", F.cross_entropy(logits, y), sync_dist=True)
        self.val_scores.append((logits.argmax(-1) == y).float().mean().item())

    def on_validation_epoch_end(self):
        scores = torch.tensor(self.val_scores, dtype=torch.float64)  # ok
        self.log("val/acc", scores.mean().item())
        self.val_scores.clear()

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=self.hparams.lr, weight_decay=0.05)


def build_strategy(args):
    if args.strategy == "fsdp":
        return FSDPStrategy(sharding_strategy="FULL_SHARD", process_group_backend=args.pg_backend)
    return DDPStrategy(process_group_backend="nccl", static_graph=True)  # expect: distributed


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--accelerator", default="gpu")  # may: device
    p.add_argument("--data-dir", default="/data/imagenet")
    p.add_argument("--devices", type=int, default=4)
    p.add_argument("--strategy", choices=["ddp", "fsdp"], default="ddp")
    p.add_argument("--pg-backend", default="nccl")  # expect: distributed
    p.add_argument("--fp16", action="store_true", help="train with 16-bit mixed precision")  # may: precision
    p.add_argument("--quantize", action="store_true", help="load the backbone in 4-bit NF4 (bitsandbytes, CUDA only)")  # ok
    p.add_argument("--compile-mode", default="max-autotune")  # may: compilation
    args = p.parse_args()

    if args.accelerator not in SUPPORTED_ACCELERATORS:
        raise ValueError(f"unsupported accelerator {args.accelerator!r}; expected one of {sorted(SUPPORTED_ACCELERATORS)}")

    precision = "16-mixed" if args.fp16 else "32-true"  # expect: precision
    plugins = []
    if args.quantize:
        plugins.append(BitsandbytesPrecision(mode="nf4-dq", dtype=torch.bfloat16))  # expect: kernels
        precision = None

    model = Classifier()
    model = torch.compile(model, mode=args.compile_mode)  # expect: compilation
    trainer = L.Trainer(
        accelerator=args.accelerator,
        devices=args.devices,
        strategy=build_strategy(args),
        precision=precision,
        plugins=plugins,
        max_epochs=30,
        callbacks=[
            ModelCheckpoint(monitor="val/loss", mode="min", save_top_k=3),  # ok
            EarlyStopping(monitor="val/loss", mode="min", patience=5),  # ok
        ],
    )
    trainer.fit(model, datamodule=ImageNetDataModule(args.data_dir, batch_size=128))


if __name__ == "__main__":
    main()
