from lightning.pytorch.cli import LightningCLI

from lightning_modules import ImageClassifier, ImageNetDataModule


def cli_main():
    LightningCLI(
        ImageClassifier,
        ImageNetDataModule,
        seed_everything_default=1234,
        save_config_kwargs={"overwrite": True},
        trainer_defaults={
            "accelerator": "gpu",  # may: device
            "devices": "auto",
            "precision": "bf16-mixed",  # expect: precision
            "benchmark": True,  # may: kernels, device
            "max_epochs": 90,
        },
    )


if __name__ == "__main__":
    cli_main()
