"""LitGPT-style fine-tuning with an optional Thunder / torch.compile path."""
from dataclasses import dataclass
from typing import Literal, Optional

import lightning as L
import torch
from torch import nn


@dataclass
class TrainArgs:
    precision: str = "16-mixed"  # expect-any(thunder_prec): precision
    accelerator: str = "gpu"  # may: device
    devices: int = 8
    compiler: Optional[Literal["thunder", "torch", "inductor"]] = "thunder"
    max_steps: int = 2000
    micro_batch_size: int = 4


def compile_model(model: nn.Module, compiler: Optional[str]) -> nn.Module:
    if compiler == "thunder":
        import thunder  # expect: kernels
        from thunder.executors.nvfuserex import nvfuserex  # expect: kernels
        from thunder.executors.sdpaex import sdpa_ex  # may: kernels

        return thunder.jit(model, executors=[sdpa_ex, nvfuserex])  # expect: kernels
    if compiler == "inductor":
        return torch.compile(model, backend="inductor")  # expect: compilation
    if compiler == "torch":
        return torch.compile(model)  # may: compilation
    return model


class LitLM(L.LightningModule):
    def __init__(self, model: nn.Module, lr: float = 2e-5):
        super().__init__()
        self.model = model
        self.lr = lr

    def training_step(self, batch, batch_idx):
        logits = self.model(batch["input_ids"])
        loss = nn.functional.cross_entropy(logits.flatten(0, 1), batch["labels"].flatten(), ignore_index=-100)
        self.log("loss", loss)
        return loss

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=self.lr, fused=True)  # may: kernels


def main(args: TrainArgs, base: nn.Module, datamodule: L.LightningDataModule):
    model = LitLM(compile_model(base, args.compiler))
    trainer = L.Trainer(
        accelerator=args.accelerator,  # may: device
        devices=args.devices,
        precision=args.precision,  # expect-any(thunder_prec): precision
        max_steps=args.max_steps,
        strategy="ddp",
    )
    trainer.fit(model, datamodule=datamodule)


if __name__ == "__main__":
    from lit_data import FineTuneDataModule, build_model

    main(TrainArgs(), build_model("pythia-1b"), FineTuneDataModule())
