import argparse
import json
import math

import torch
import yaml
from accelerate import Accelerator
from accelerate.logging import get_logger
from transformers import AutoModelForCausalLM, AutoTokenizer, default_data_collator

logger = get_logger(__name__)


def load_config(path):
    with open(path) as f:
        if path.endswith(".json"):
            return json.load(f)
        return yaml.safe_load(f)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", default="configs/train_gpt2.yaml")
    args = parser.parse_args()
    cfg = load_config(args.config)

    accelerator = Accelerator(
        mixed_precision=cfg.get("mixed_precision", "no"),  # may: precision
        gradient_accumulation_steps=cfg["gradient_accumulation_steps"],
    )
    tokenizer = AutoTokenizer.from_pretrained(cfg["model_name_or_path"])
    model = AutoModelForCausalLM.from_pretrained(cfg["model_name_or_path"])

    block_size = cfg.get("block_size", 1024)
    data = torch.load(cfg["tokenized_path"])
    # data is already grouped into block_size chunks, so every batch has the same shape
    examples = [{"input_ids": row, "labels": row} for row in data.view(-1, block_size)]
    loader = torch.utils.data.DataLoader(
        examples, batch_size=cfg["per_device_batch_size"], collate_fn=default_data_collator, shuffle=True
    )

    optimizer = torch.optim.AdamW(model.parameters(), lr=cfg["lr"])
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)

    steps = 0
    for batch in loader:
        with accelerator.accumulate(model):
            loss = model(**batch).loss
            accelerator.backward(loss)
            optimizer.step()
            optimizer.zero_grad()
        steps += 1
        if steps % 100 == 0:
            logger.info(f"step {steps} ppl {math.exp(loss.item()):.2f}")


if __name__ == "__main__":
    main()
