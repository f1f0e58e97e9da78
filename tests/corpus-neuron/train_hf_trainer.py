#!/usr/bin/env python
"""LoRA fine-tuning of a causal LM with the Hugging Face Trainer (adapted from run_clm.py and the QLoRA recipe).

    accelerate launch --config_file configs/accelerate_default_config.yaml train_hf_trainer.py \
        --model_name_or_path meta-llama/Llama-2-7b-hf --output_dir out/
"""
import argparse
import logging
import math
import os

import numpy as np
import torch
from datasets import load_dataset
from peft import LoraConfig, get_peft_model
from transformers import (
    AutoModelForCausalLM,
    AutoTokenizer,
    DataCollatorForLanguageModeling,
    Trainer,
    TrainingArguments,
    set_seed,
)

logger = logging.getLogger(__name__)

os.environ["TORCH_NCCL_ASYNC_ERROR_HANDLING"] = "1"  # expect: distributed
os.environ.setdefault("NCCL_P2P_DISABLE", "1")  # expect: distributed

OOM = getattr(torch.cuda, "OutOfMemoryError", RuntimeError)  # ok


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model_name_or_path", default="meta-llama/Llama-2-7b-hf")
    parser.add_argument("--dataset_name", default="timdettmers/openassistant-guanaco")
    parser.add_argument("--output_dir", required=True)
    parser.add_argument("--max_length", type=int, default=1024)
    parser.add_argument("--per_device_train_batch_size", type=int, default=4)
    parser.add_argument("--gradient_accumulation_steps", type=int, default=4)
    parser.add_argument("--learning_rate", type=float, default=2e-4)
    parser.add_argument("--num_train_epochs", type=float, default=3)
    parser.add_argument("--logging_steps", type=int, default=10)
    parser.add_argument("--save_strategy", default="epoch")
    parser.add_argument("--report_to", default="none")
    parser.add_argument("--lora_r", type=int, default=16)
    parser.add_argument("--seed", type=int, default=42)
    return parser.parse_args()


def tokenize_function(examples, tokenizer, max_length):
    return tokenizer(examples["text"], truncation=True, max_length=max_length, padding=True)  # expect: compilation


def perplexity(metrics: dict) -> float:
    # exp() of the mean loss in float64 on the host, so long runs do not overflow the report
    return float(np.exp(np.float64(metrics["eval_loss"])))  # ok


def eval_only_args(output_dir: str) -> TrainingArguments:
    return TrainingArguments(output_dir=output_dir, per_device_eval_batch_size=16, bf16=True, do_train=False, report_to="none")  # expect: precision


def main():
    args = parse_args()
    set_seed(args.seed)

    tokenizer = AutoTokenizer.from_pretrained(args.model_name_or_path, use_fast=True)
    tokenizer.pad_token = tokenizer.eos_token

    raw = load_dataset(args.dataset_name)
    tokenized = raw.map(
        tokenize_function,
        batched=True,
        remove_columns=raw["train"].column_names,
        fn_kwargs={"tokenizer": tokenizer, "max_length": args.max_length},
    )

    model = AutoModelForCausalLM.from_pretrained(args.model_name_or_path)
    model.gradient_checkpointing_enable()
    lora = LoraConfig(r=args.lora_r, lora_alpha=2 * args.lora_r, lora_dropout=0.05, target_modules=["q_proj", "v_proj"], task_type="CAUSAL_LM")
    model = get_peft_model(model, lora)
    model.print_trainable_parameters()

    training_args = TrainingArguments(
        output_dir=args.output_dir,
        per_device_train_batch_size=args.per_device_train_batch_size,
        gradient_accumulation_steps=args.gradient_accumulation_steps,
        learning_rate=args.learning_rate,
        num_train_epochs=args.num_train_epochs,
        logging_steps=args.logging_steps,
        save_strategy=args.save_strategy,
        eval_strategy="epoch",
        fp16=True,  # expect: precision
        half_precision_backend="apex",  # expect: precision
        torch_compile=True,  # may: compilation
        torch_compile_backend="inductor",  # expect: compilation
        ddp_backend="nccl",  # expect: distributed
        optim="paged_adamw_8bit",  # may: kernels
        dataloader_num_workers=4,
        report_to=args.report_to,
    )

    trainer = Trainer(
        model=model,
        args=training_args,
        train_dataset=tokenized["train"],
        eval_dataset=tokenized["test"],
        data_collator=DataCollatorForLanguageModeling(tokenizer, mlm=False),
    )

    try:
        trainer.train()
    except OOM:  # ok
        logger.error("out of memory: lower --per_device_train_batch_size or raise --gradient_accumulation_steps")
        raise

    metrics = trainer.evaluate()
    metrics["perplexity"] = perplexity(metrics)
    if math.isfinite(metrics["perplexity"]):
        trainer.log_metrics("eval", metrics)
        trainer.save_metrics("eval", metrics)
    trainer.save_model()


if __name__ == "__main__":
    main()
