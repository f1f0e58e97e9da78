from pathlib import Path

from setuptools import find_packages, setup

long_description = Path("README.md").read_text(encoding="utf-8") if Path("README.md").exists() else ""

install_requires = [
    "torch>=2.1",
    "numpy<2",
    "einops>=0.7",
    "safetensors",
    "cupy-cuda12x",  # expect: dependencies
    "nvidia-cudnn-cu12==8.9.7.29",  # expect: dependencies
]

extras = {
    "train": ["deepspeed>=0.12", "wandb"],  # may: dependencies, distributed
    "xformers": ["xformers>=0.0.23"],  # expect: dependencies
    "serve": ["vllm>=0.4"],  # may: dependencies
}

setup(
    name="longctx",
    version="0.2.0",
    description="Long-context fine-tuning recipes",
    long_description=long_description,
    long_description_content_type="text/markdown",
    package_dir={"": "src"},
    packages=find_packages("src"),
    python_requires=">=3.9",
    install_requires=install_requires,
    extras_require=extras,
)
