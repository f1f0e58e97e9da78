"""LightningModule + LightningDataModule + LightningCLI entry point for causal-LM fine-tuning.

    python train_lightning_module.py fit --config configs/lightning_cli_gpu.yaml
"""
from __future__ import annotations

import lightning.pytorch as pl
import torch
import torch.nn.functional as F
from datasets import load_dataset
from lightning.pytorch.cli import LightningCLI
from lightning.pytorch.plugins import BitsandbytesPrecision
from lightning.pytorch.strategies import DDPStrategy
from torch.utils.data import DataLoader
from transformers import AutoModelForCausalLM, AutoTokenizer, get_cosine_schedule_with_warmup

SUPPORTED_ACCELERATORS = {"cpu", "gpu", "cuda", "mps"}  # expect: kernels


class CausalLMModule(pl.LightningModule):
    def __init__(self, model_name: str = "gpt2", learning_rate: float = 2e-5, warmup_steps: int = 100):
        super().__init__()
        self.save_hyperparameters()
        self.model = AutoModelForCausalLM.from_pretrained(model_name)
        self._copy_stream: torch.cuda.Stream | None = None  # ok

    def forward(self, input_ids, attention_mask, labels=None):
        out = self.model(input_ids=input_ids, attention_mask=attention_mask)
        logits = out.logits[:, :-1]
        if labels is None:
            return logits
        mask = attention_mask[:, 1:].bool()
        # score real tokens only: gather them with the mask before the loss
        active_logits = logits[mask]  # expect: compilation
        active_labels = labels[:, 1:][mask]  # expect: compilation
        return F.cross_entropy(active_logits, active_labels)

    def training_step(self, batch, batch_idx):
        loss = self(**batch)
        self.log("train_loss", loss, prog_bar=True, sync_dist=True)
        return loss

    def validation_step(self, batch, batch_idx):
        loss = self(**batch)
        self.log("val_loss", loss, sync_dist=True)

    def configure_optimizers(self):
        optimizer = torch.optim.AdamW(self.parameters(), lr=self.hparams.learning_rate, weight_decay=0.01)
        scheduler = get_cosine_schedule_with_warmup(optimizer, self.hparams.warmup_steps, self.trainer.estimated_stepping_batches)
        return {"optimizer": optimizer, "lr_scheduler": {"scheduler": scheduler, "interval": "step"}}


class TextDataModule(pl.LightningDataModule):
    def __init__(self, dataset_name: str = "tatsu-lab/alpaca", tokenizer_name: str = "gpt2", batch_size: int = 8,
                 max_length: int = 1024, num_workers: int = 4, pin_memory: bool = True):
        super().__init__()
        self.save_hyperparameters()
        self.tokenizer = AutoTokenizer.from_pretrained(tokenizer_name)
        if self.tokenizer.pad_token is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token

    def setup(self, stage: str | None = None):
        ds = load_dataset(self.hparams.dataset_name, split="train").train_test_split(test_size=0.02, seed=0)
        self.train_ds, self.val_ds = ds["train"], ds["test"]

    def collate(self, examples):
        texts = [e["text"] for e in examples]
        enc = self.tokenizer(texts, padding="longest", truncation=True, max_length=self.hparams.max_length, return_tensors="pt")  # expect: compilation
        enc["labels"] = enc["input_ids"].clone()
        return dict(enc)

    def train_dataloader(self):
        return DataLoader(self.train_ds, batch_size=self.hparams.batch_size, shuffle=True, collate_fn=self.collate,
                          num_workers=self.hparams.num_workers, pin_memory=self.hparams.pin_memory)

    def val_dataloader(self):
        return DataLoader(self.val_ds, batch_size=self.hparams.batch_size, collate_fn=self.collate,
                          num_workers=self.hparams.num_workers)


def build_trainer(accelerator: str, devices: int = 8, qlora: bool = False) -> pl.Trainer:
    if accelerator not in SUPPORTED_ACCELERATORS:
        raise ValueError(f"accelerator must be one of {sorted(SUPPORTED_ACCELERATORS)}, got {accelerator!r}")
    plugins = [BitsandbytesPrecision(mode="nf4-dq", dtype=torch.bfloat16)] if qlora else None  # expect: kernels
    return pl.Trainer(
        accelerator=accelerator,
        devices=devices,
        strategy=DDPStrategy(process_group_backend="nccl", find_unused_parameters=False),  # expect: distributed
        precision=None if qlora else "bf16-mixed",  # expect: precision
        max_epochs=3,
        plugins=plugins,
    )


def cli_main():
    LightningCLI(
        CausalLMModule,
        TextDataModule,
        trainer_defaults={"precision": "16-mixed", "accelerator": "gpu", "devices": 1},  # expect: precision, device
        save_config_kwargs={"overwrite": True},
    )


if __name__ == "__main__":
    cli_main()
