"""Distributed BERT fine-tuning on GLUE/MRPC with Ray Train's TorchTrainer.

    python train_ray_llm.py --num-workers 8
"""
import argparse
import os
import tempfile

import ray
import ray.train
import torch
from datasets import load_dataset
from ray.train import Checkpoint, RunConfig, ScalingConfig
from ray.train.torch import TorchConfig, TorchTrainer, prepare_data_loader, prepare_model
from torch.utils.data import DataLoader
from transformers import AutoModelForSequenceClassification, AutoTokenizer


def train_func(config):
    tokenizer = AutoTokenizer.from_pretrained(config["model"])
    ds = load_dataset("glue", "mrpc", split="train")

    def collate(batch):
        enc = tokenizer([b["sentence1"] for b in batch], [b["sentence2"] for b in batch], padding=True,  # expect: compilation
                        truncation=True, max_length=256, return_tensors="pt")
        enc["labels"] = torch.tensor([b["label"] for b in batch])
        return enc

    loader = prepare_data_loader(DataLoader(ds, batch_size=config["batch_size"], shuffle=True, collate_fn=collate))
    model = prepare_model(AutoModelForSequenceClassification.from_pretrained(config["model"], num_labels=2))
    optimizer = torch.optim.AdamW(model.parameters(), lr=config["lr"])

    for epoch in range(config["epochs"]):
        if ray.train.get_context().get_world_size() > 1:
            loader.sampler.set_epoch(epoch)
        model.train()
        total = 0.0
        for batch in loader:
            loss = model(**batch).loss
            loss.backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            total += loss.item()
        with tempfile.TemporaryDirectory() as tmp:
            if ray.train.get_context().get_world_rank() == 0:
                torch.save(model.state_dict(), os.path.join(tmp, "model.pt"))
            ray.train.report({"loss": total / len(loader), "epoch": epoch}, checkpoint=Checkpoint.from_directory(tmp))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--num-workers", type=int, default=4)
    parser.add_argument("--model", default="bert-base-uncased")
    parser.add_argument("--storage", default="s3://ml-experiments/ray-results")
    args = parser.parse_args()

    ray.init(runtime_env={"env_vars": {"NCCL_SOCKET_IFNAME": "eth0", "TORCH_NCCL_ASYNC_ERROR_HANDLING": "1"}})  # expect: distributed
    trainer = TorchTrainer(
        train_func,
        train_loop_config={"model": args.model, "lr": 2e-5, "batch_size": 32, "epochs": 3},
        torch_config=TorchConfig(backend="nccl", timeout_s=1800),  # expect: distributed
        scaling_config=ScalingConfig(num_workers=args.num_workers, use_gpu=True, resources_per_worker={"GPU": 1, "CPU": 8}),  # may: device
        run_config=RunConfig(name="bert-mrpc", storage_path=args.storage),
    )
    result = trainer.fit()
    print(result.metrics)


if __name__ == "__main__":
    main()
