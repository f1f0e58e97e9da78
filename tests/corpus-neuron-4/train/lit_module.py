"""LightningModule for causal-LM fine-tuning, with optional 4-bit weights
and an optional Lightning Thunder compile path.

    python train/lit_module.py --precision bf16-mixed --devices 8
"""
import argparse

import lightning as L
import torch
import torch.nn.functional as F
from lightning.pytorch.callbacks import EarlyStopping, LearningRateMonitor, ModelCheckpoint
from lightning.pytorch.plugins import BitsandbytesPrecision  # may: kernels
from torch import nn


class LitCausalLM(L.LightningModule):
    def __init__(self, model: nn.Module, lr: float = 2e-4, warmup_steps: int = 100):
        super().__init__()
        self.model = model
        self.save_hyperparameters(ignore=["model"])

    def training_step(self, batch, batch_idx):
        logits = self.model(batch["input_ids"])
        loss = F.cross_entropy(logits[:, :-1].flatten(0, 1), batch["input_ids"][:, 1:].flatten())
        self.log("train_loss", loss, prog_bar=True, sync_dist=True)
        return loss

    def validation_step(self, batch, batch_idx):
        logits = self.model(batch["input_ids"])
        loss = F.cross_entropy(logits[:, :-1].flatten(0, 1), batch["input_ids"][:, 1:].flatten())
        self.log("val_loss", loss, sync_dist=True)

    def configure_optimizers(self):
        optimizer = torch.optim.AdamW(self.parameters(), lr=self.hparams.lr, weight_decay=0.1, fused=True)  # may: kernels
        scheduler = torch.optim.lr_scheduler.LambdaLR(
            optimizer, lambda step: min(1.0, (step + 1) / self.hparams.warmup_steps)
        )
        return {"optimizer": optimizer, "lr_scheduler": {"scheduler": scheduler, "interval": "step"}}


def maybe_thunder(model: nn.Module, use_thunder: bool) -> nn.Module:
    if not use_thunder:
        return model
    import thunder  # expect-any(thunder): kernels
    from thunder.executors.nvfuserex import nvfuserex  # expect-any(thunder): kernels

    return thunder.jit(model, executors=[nvfuserex])  # expect-any(thunder): kernels


def build_trainer(args) -> L.Trainer:
    callbacks = [
        ModelCheckpoint(monitor="val_loss", mode="min", save_top_k=3),  # ok
        EarlyStopping(monitor="val_loss", mode="min", patience=5),  # ok
        LearningRateMonitor(logging_interval="step"),
    ]
    plugins = []
    if args.quantize == "nf4":
        plugins.append(BitsandbytesPrecision(mode="nf4-dq", dtype=torch.bfloat16))  # expect: kernels
    return L.Trainer(
        accelerator="gpu",  # may: device
        devices=args.devices,
        strategy="ddp",  # may: distributed
        precision=None if plugins else args.precision,  # may: precision
        plugins=plugins,
        max_steps=args.max_steps,
        gradient_clip_val=1.0,
        callbacks=callbacks,
    )


def build_eval_trainer() -> L.Trainer:
    return L.Trainer(accelerator="auto", devices=1, precision="16-mixed", logger=False)  # expect: precision


def build_debug_trainer() -> L.Trainer:
    return L.Trainer(accelerator="cpu", devices=1, precision="32-true", fast_dev_run=True)  # ok


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--precision", default="bf16-mixed", choices=["32-true", "16-mixed", "bf16-mixed"])  # expect: precision
    parser.add_argument("--quantize", choices=["none", "nf4"], default="none")
    parser.add_argument("--devices", type=int, default=8)
    parser.add_argument("--max-steps", type=int, default=10_000)
    parser.add_argument("--thunder", action="store_true", help="compile with Lightning Thunder + nvFuser")  # ok
    return parser.parse_args()


if __name__ == "__main__":
    args = parse_args()
    base = nn.Sequential(nn.Embedding(32000, 1024), nn.Linear(1024, 32000))
    module = LitCausalLM(maybe_thunder(base, args.thunder))
    trainer = build_trainer(args)
    trainer.fit(module)
