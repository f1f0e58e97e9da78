"""Ray Train entry point for the SFT job: one Hugging Face Trainer per Ray worker."""
import os

import ray
import ray.train.huggingface.transformers as ray_hf
import torch
from datasets import load_dataset
from ray.train import CheckpointConfig, RunConfig, ScalingConfig
from ray.train.torch import TorchConfig, TorchTrainer
from transformers import (
    AutoModelForCausalLM,
    AutoTokenizer,
    DataCollatorWithPadding,
    Trainer,
    TrainingArguments,
)

MODEL_ID = os.environ.get("MODEL_ID", "Qwen/Qwen2-1.5B")
NUM_WORKERS = int(os.environ.get("NUM_WORKERS", "8"))
USE_BF16 = os.environ.get("USE_BF16", "1") == "1"  # may: precision


def train_loop_per_worker(config):
    tokenizer = AutoTokenizer.from_pretrained(MODEL_ID)
    tokenizer.pad_token = tokenizer.pad_token or tokenizer.eos_token
    model = AutoModelForCausalLM.from_pretrained(
        MODEL_ID, torch_dtype=torch.bfloat16 if USE_BF16 else torch.float32  # may: precision
    )

    ds = load_dataset("json", data_files=config["train_file"], split="train")
    ds = ds.map(lambda ex: tokenizer(ex["text"], truncation=True, max_length=1024), remove_columns=["text"])
    collator = DataCollatorWithPadding(tokenizer, padding="longest")  # expect: compilation

    args = TrainingArguments(
        output_dir="/mnt/cluster_storage/sft",
        per_device_train_batch_size=config["batch_size"],
        learning_rate=config["lr"],
        num_train_epochs=1,
        bf16=USE_BF16,  # expect: precision
        fp16=not USE_BF16,  # expect: precision
        half_precision_backend="auto",  # expect: precision
        ddp_backend="nccl",  # expect: distributed
        optim="adamw_torch_fused",  # may: kernels
        logging_steps=10,
        save_strategy="no",
        report_to="none",
    )
    trainer = Trainer(model=model, args=args, train_dataset=ds, data_collator=collator)
    trainer.add_callback(ray_hf.RayTrainReportCallback())
    trainer = ray_hf.prepare_trainer(trainer)
    trainer.train()


def main():
    runtime_env = {
        "env_vars": {
            "NCCL_SOCKET_IFNAME": "ens5",  # expect: distributed
            "TORCH_NCCL_ASYNC_ERROR_HANDLING": "1",  # expect: distributed
            "HF_HUB_ENABLE_HF_TRANSFER": "1",
        }
    }
    ray.init(runtime_env=runtime_env)
    trainer = TorchTrainer(
        train_loop_per_worker,
        train_loop_config={"batch_size": 4, "lr": 2e-5, "train_file": "s3://my-bucket/sft/train.jsonl"},
        scaling_config=ScalingConfig(num_workers=NUM_WORKERS, use_gpu=True),  # may: device
        torch_config=TorchConfig(backend="nccl", timeout_s=3600),  # expect: distributed
        run_config=RunConfig(name="sft-qwen2", checkpoint_config=CheckpointConfig(num_to_keep=1)),
    )
    result = trainer.fit()
    print("finished:", result.metrics)


if __name__ == "__main__":
    main()
