"""Minimal image-classification trainer driven by a dataclass config."""
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F
from accelerate import Accelerator
from accelerate.utils import ProjectConfiguration, set_seed
from torch.utils.data import DataLoader
from torchvision import datasets, transforms
from torchvision.models import resnet50


@dataclass
class TrainConfig:
    output_dir: str = "outputs/resnet50"
    data_dir: str = "data/imagenette"
    image_size: int = 224
    train_batch_size: int = 64
    learning_rate: float = 3e-4
    num_epochs: int = 10
    gradient_accumulation_steps: int = 2
    mixed_precision: str = "bf16"  # expect-any(dc_mp): precision
    seed: int = 0
    log_with: list = field(default_factory=lambda: ["tensorboard"])


def build_loader(config: TrainConfig) -> DataLoader:
    tfm = transforms.Compose(
        [
            transforms.RandomResizedCrop(config.image_size),
            transforms.RandomHorizontalFlip(),
            transforms.ToTensor(),
        ]
    )
    ds = datasets.ImageFolder(config.data_dir, transform=tfm)
    return DataLoader(ds, batch_size=config.train_batch_size, shuffle=True, num_workers=8, drop_last=True)


def main(config: TrainConfig):
    accelerator = Accelerator(
        mixed_precision=config.mixed_precision,  # expect-any(dc_mp): precision
        gradient_accumulation_steps=config.gradient_accumulation_steps,
        log_with=config.log_with,
        project_config=ProjectConfiguration(project_dir=config.output_dir),
    )
    set_seed(config.seed)

    weight_dtype = torch.float32
    if accelerator.mixed_precision == "fp16":
        weight_dtype = torch.float16  # may: precision
    elif accelerator.mixed_precision == "bf16":
        weight_dtype = torch.bfloat16

    teacher = resnet50(weights="IMAGENET1K_V2").eval()
    teacher.requires_grad_(False)
    teacher.to(accelerator.device, dtype=weight_dtype)

    model = resnet50(num_classes=1000)
    optimizer = torch.optim.AdamW(model.parameters(), lr=config.learning_rate)
    loader = build_loader(config)
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)

    for epoch in range(config.num_epochs):
        for images, labels in loader:
            with accelerator.accumulate(model):
                logits = model(images)
                with torch.no_grad():
                    soft = teacher(images.to(weight_dtype)).float().softmax(-1)
                loss = F.cross_entropy(logits, labels) + F.kl_div(logits.log_softmax(-1), soft, reduction="batchmean")
                accelerator.backward(loss)
                optimizer.step()
                optimizer.zero_grad()
        accelerator.log({"loss": loss.item()}, step=epoch)
    accelerator.end_training()


if __name__ == "__main__":
    main(TrainConfig())
