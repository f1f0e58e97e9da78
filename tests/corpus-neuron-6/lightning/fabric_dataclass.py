from dataclasses import asdict, dataclass

import lightning as L
import torch
from lightning.fabric.plugins import BitsandbytesPrecision  # may: kernels
from torch import nn

SUPPORTED_ACCELERATORS = {"cpu", "gpu", "cuda", "mps"}  # expect: kernels; may: device


@dataclass
class FabricConfig:
    accelerator: str = "cuda"  # expect-any(fab_dev): device
    devices: int = 4
    strategy: str = "fsdp"  # may: distributed
    precision: str = "bf16-mixed"  # expect-any(fab_prec): precision


@dataclass
class OptimConfig:
    lr: float = 3e-4
    weight_decay: float = 0.1
    max_steps: int = 10_000


def validate(cfg: FabricConfig) -> None:
    if cfg.accelerator not in SUPPORTED_ACCELERATORS:
        raise ValueError(f"Unsupported accelerator {cfg.accelerator!r}; choose one of {sorted(SUPPORTED_ACCELERATORS)}")


def build_fabric(cfg: FabricConfig, quantize: bool = False) -> L.Fabric:
    validate(cfg)
    plugins = None
    if quantize:
        plugins = BitsandbytesPrecision(mode="nf4-dq", dtype=torch.bfloat16)  # expect: kernels
        return L.Fabric(accelerator=cfg.accelerator, devices=cfg.devices, plugins=plugins)  # may: device
    return L.Fabric(**asdict(cfg))  # expect-any(fab_prec): precision; expect-any(fab_dev): device


def train(fabric: L.Fabric, model: nn.Module, loader, optim_cfg: OptimConfig):
    optimizer = torch.optim.AdamW(model.parameters(), lr=optim_cfg.lr, weight_decay=optim_cfg.weight_decay)
    model, optimizer = fabric.setup(model, optimizer)
    loader = fabric.setup_dataloaders(loader)
    step = 0
    for x, y in loader:
        loss = nn.functional.mse_loss(model(x), y)
        fabric.backward(loss)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        step += 1
        if step >= optim_cfg.max_steps:
            break
    fabric.print(f"finished {step} steps, last loss {loss.item():.4f}")


if __name__ == "__main__":
    cfg = FabricConfig()
    fabric = build_fabric(cfg)
    fabric.launch()
    model = nn.Sequential(nn.Linear(128, 512), nn.GELU(), nn.Linear(512, 128))
    data = torch.utils.data.TensorDataset(torch.randn(4096, 128), torch.randn(4096, 128))
    train(fabric, model, torch.utils.data.DataLoader(data, batch_size=64), OptimConfig())
