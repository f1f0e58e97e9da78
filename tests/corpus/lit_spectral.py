"""LightningModule and config for a spectral (FNO-style) image classifier."""
import os
from dataclasses import asdict, dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F
import pytorch_lightning as pl
from pytorch_lightning.callbacks import LearningRateMonitor, ModelCheckpoint
from pytorch_lightning.strategies import DDPStrategy

try:
    from apex.optimizers import FusedAdam  # expect: kernels
except ImportError:
    FusedAdam = None

try:
    import bitsandbytes as bnb  # expect: kernels
except ImportError:
    bnb = None

@dataclass
class ModelConfig:
    in_channels: int = 3
    width: int = 64
    modes: int = 16
    num_classes: int = 10

@dataclass
class TrainerConfig:
    max_epochs: int = 50
    devices: int = 8
    precision: str = "bf16-mixed"
    lr: float = 3e-4
    optimizer: str = "fused_adam"
    compile: bool = True
    pretrained: str = ""
    # NOTE: cuda graphs are disabled for this model  # ok

class ScaledTanh(torch.autograd.Function):
    @staticmethod
    @torch.cuda.amp.custom_fwd(cast_inputs=torch.float32)  # expect: precision
    def forward(ctx, x, scale):
        y = torch.tanh(x) * scale
        ctx.save_for_backward(y, torch.tensor(scale))
        return y

    @staticmethod
    @torch.cuda.amp.custom_bwd  # expect: precision
    def backward(ctx, grad):
        y, scale = ctx.saved_tensors
        return grad * (scale - y * y / scale), None

class SpectralConv2d(nn.Module):
    def __init__(self, cin, cout, modes):
        super().__init__()
        self.modes = modes
        scale = 1.0 / (cin * cout)
        self.weight = nn.Parameter(scale * torch.randn(cin, cout, modes, modes, dtype=torch.complex64))  # expect: precision

    def forward(self, x):
        b, _, h, w = x.shape
        m = self.modes
        with torch.cuda.amp.autocast(enabled=False):  # expect: precision
            x_ft = torch.fft.rfft2(x.float())  # expect: compilation
            out_ft = torch.zeros(b, self.weight.shape[1], h, w // 2 + 1, dtype=torch.complex64, device=x.device)  # expect: precision
            out_ft[:, :, :m, :m] = torch.einsum("bixy,ioxy->boxy", x_ft[:, :, :m, :m], self.weight)
            return torch.fft.irfft2(out_ft, s=(h, w))  # expect: compilation

class SpectralClassifier(pl.LightningModule):
    def __init__(self, model_cfg: ModelConfig, train_cfg: TrainerConfig):
        super().__init__()
        self.save_hyperparameters({"model": asdict(model_cfg), "train": asdict(train_cfg)})  # ok
        self.train_cfg = train_cfg
        self.lift = nn.Conv2d(model_cfg.in_channels, model_cfg.width, 1)
        self.blocks = nn.ModuleList([SpectralConv2d(model_cfg.width, model_cfg.width, model_cfg.modes) for _ in range(4)])
        self.head = nn.Linear(model_cfg.width, model_cfg.num_classes)
        self.register_buffer("mean", torch.tensor([0.485, 0.456, 0.406], dtype=torch.float32).view(1, 3, 1, 1))  # ok
        if train_cfg.pretrained:
            state = torch.load(train_cfg.pretrained, map_location="cuda:0")  # expect: device
            self.load_state_dict(state, strict=False)

    def forward(self, x):
        x = self.lift(x - self.mean)
        for blk in self.blocks:
            x = F.gelu(x + blk(x))
        return self.head(ScaledTanh.apply(x.mean(dim=(2, 3)), 3.0))

    def transfer_batch_to_device(self, batch, device, dataloader_idx):
        x, y = batch
        return x.cuda(non_blocking=True), y.cuda(non_blocking=True)  # expect: device

    def on_fit_start(self):
        if self.device.type == "cuda":  # expect: device
            torch.cuda.reset_peak_memory_stats(self.device)  # expect: runtime
        self.print(f"fitting on {self.device}; expecting cuda bf16")  # ok

    def training_step(self, batch, batch_idx):
        loss = F.cross_entropy(self(batch[0]), batch[1], label_smoothing=0.1)
        acc = (self(batch[0]).argmax(-1) == batch[1]).float().mean()  # ok
        self.log("train/loss", loss, prog_bar=True)  # ok
        self.log("train/acc", acc)  # ok
        if batch_idx % 100 == 0:
            self.log("sys/gpu_mem_mb", torch.cuda.memory_allocated() / 2**20)  # expect: runtime
        return loss

    def on_validation_epoch_end(self):
        torch.cuda.empty_cache()  # expect: runtime

    def configure_optimizers(self):
        cfg = self.train_cfg
        if cfg.optimizer == "fused_adam" and FusedAdam is not None:
            opt = FusedAdam(self.parameters(), lr=cfg.lr, weight_decay=0.05)
        elif cfg.optimizer == "adam8bit" and bnb is not None:
            opt = bnb.optim.AdamW8bit(self.parameters(), lr=cfg.lr)
        else:
            opt = torch.optim.AdamW(self.parameters(), lr=cfg.lr, weight_decay=0.05)  # ok
        return {"optimizer": opt, "lr_scheduler": torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=cfg.max_epochs)}

def build_trainer(cfg: TrainerConfig) -> pl.Trainer:
    torch.backends.cudnn.benchmark = True  # expect: runtime
    torch.backends.cuda.matmul.allow_tf32 = True  # expect: precision
    if torch.cuda.get_device_capability()[0] < 8:  # expect: runtime
        cfg.precision = "16-mixed"
    os.environ["NCCL_P2P_DISABLE"] = "1"  # expect: distributed
    num_devices = torch.cuda.device_count()  # expect: runtime
    strategy = DDPStrategy(process_group_backend="nccl", find_unused_parameters=False)  # expect: distributed
    callbacks = [ModelCheckpoint(monitor="val/acc", mode="max"), LearningRateMonitor()]  # ok
    print(f"launching with {num_devices} cuda devices")  # ok
    return pl.Trainer(
        accelerator="gpu",  # expect: device
        devices=num_devices or cfg.devices,
        strategy=strategy,
        precision=cfg.precision,
        max_epochs=cfg.max_epochs,
        callbacks=callbacks,
    )

def build_debug_trainer() -> pl.Trainer:
    """CPU trainer for smoke tests (no cuda needed)."""  # ok
    return pl.Trainer(accelerator="cpu", devices=1, fast_dev_run=True)  # ok

if __name__ == "__main__":
    pl.seed_everything(1234)  # ok
    model_cfg, train_cfg = ModelConfig(), TrainerConfig()
    model = SpectralClassifier(model_cfg, train_cfg)
    if train_cfg.compile:
        model = torch.compile(model, dynamic=True)  # expect: compilation
    trainer = build_trainer(train_cfg)
    trainer.fit(model)
