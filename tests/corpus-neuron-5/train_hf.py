#!/usr/bin/env python
"""Fine-tune a causal LM with the Hugging Face Trainer."""
import os
from dataclasses import dataclass, field

import torch
from datasets import load_dataset
from transformers import (
    AutoModelForCausalLM,
    AutoTokenizer,
    DataCollatorForLanguageModeling,
    HfArgumentParser,
    Trainer,
    TrainingArguments,
)

DEFAULT_TRAINING_ARGS = {
    "output_dir": "checkpoints",
    "per_device_train_batch_size": 8,
    "gradient_accumulation_steps": 4,
    "learning_rate": 2e-5,
    "num_train_epochs": 1,
    "fp16": True,  # expect: precision
    "half_precision_backend": "cuda_amp",  # expect: precision
    "torch_compile": True,  # may: compilation
    "torch_compile_backend": "inductor",  # expect: compilation
    "torch_compile_mode": "max-autotune",  # may: compilation
    "ddp_backend": "nccl",  # expect: distributed
    "optim": "adamw_torch_fused",  # may: kernels
    "report_to": "none",
}


@dataclass
class ScriptArguments:
    model_name: str = field(default="EleutherAI/pythia-410m")
    dataset_name: str = field(default="wikitext")
    dataset_config: str = field(default="wikitext-2-raw-v1")
    max_length: int = field(default=1024)
    use_flash_attn: bool = field(default=True)


def tokenize_fn(tokenizer, max_length):
    def _tok(batch):
        return tokenizer(batch["text"], truncation=True, max_length=max_length, padding="max_length")  # ok
    return _tok


def main():
    parser = HfArgumentParser(ScriptArguments)
    (script_args,) = parser.parse_args_into_dataclasses()

    tokenizer = AutoTokenizer.from_pretrained(script_args.model_name)
    tokenizer.pad_token = tokenizer.eos_token
    model = AutoModelForCausalLM.from_pretrained(
        script_args.model_name,
        torch_dtype=torch.float16,  # may: precision
        attn_implementation="flash_attention_2" if script_args.use_flash_attn else "sdpa",  # may: kernels
    )

    raw = load_dataset(script_args.dataset_name, script_args.dataset_config)
    tokenized = raw.map(tokenize_fn(tokenizer, script_args.max_length), batched=True, remove_columns=["text"])

    training_args = TrainingArguments(**{**DEFAULT_TRAINING_ARGS, "bf16": os.getenv("USE_BF16", "0") == "1"})  # may: precision, compilation, distributed
    trainer = Trainer(
        model=model,
        args=training_args,
        train_dataset=tokenized["train"],
        data_collator=DataCollatorForLanguageModeling(tokenizer, mlm=False),
    )
    trainer.train()

    eval_args = TrainingArguments(
        output_dir="eval",
        per_device_eval_batch_size=16,
        bf16=True,  # expect: precision
        torch_compile=True,  # may: compilation
        torch_compile_backend="inductor",  # expect: compilation
    )
    Trainer(model=model, args=eval_args, eval_dataset=tokenized["validation"]).evaluate()


if __name__ == "__main__":
    main()
