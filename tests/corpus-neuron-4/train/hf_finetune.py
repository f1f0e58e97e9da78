#!/usr/bin/env python
"""Fine-tune a sequence classifier on GLUE with the Hugging Face Trainer.

    python train/hf_finetune.py --task sst2 --model roberta-base

Mixed precision is on by default (set USE_FP16=0 to disable); on Ampere or
newer pass nothing and bf16 is used instead.
"""
import argparse
import os

import numpy as np
import torch
from datasets import load_dataset
from transformers import (
    AutoModelForSequenceClassification,
    AutoTokenizer,
    DataCollatorWithPadding,
    Trainer,
    TrainingArguments,
)

TASK_KEYS = {"sst2": ("sentence", None), "mrpc": ("sentence1", "sentence2"), "qnli": ("question", "sentence")}


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--task", default="sst2", choices=sorted(TASK_KEYS))
    p.add_argument("--model", default="roberta-base")
    p.add_argument("--output_dir", default="runs/glue")
    p.add_argument("--batch_size", type=int, default=32)
    p.add_argument("--max_length", type=int, default=128)
    p.add_argument("--fp16", action="store_true", help="fp16 mixed precision for evaluation")  # may: precision
    p.add_argument("--no_bf16", action="store_true", help="disable bf16 autocast")
    p.add_argument("--static_padding", action="store_true", help="pad every batch to --max_length")
    return p.parse_args()


def tokenize_fn(tokenizer, task: str, max_length: int, static: bool):
    key1, key2 = TASK_KEYS[task]

    def _tok(examples):
        texts = (examples[key1],) if key2 is None else (examples[key1], examples[key2])
        if static:
            return tokenizer(*texts, truncation=True, max_length=max_length, padding="max_length")  # ok
        return tokenizer(*texts, truncation=True, max_length=max_length, padding=True)  # expect: compilation

    return _tok


def compute_metrics(eval_pred):
    logits, labels = eval_pred
    preds = np.argmax(logits, axis=-1)
    return {"accuracy": float(np.mean(preds == labels, dtype=np.float64))}  # ok


def main() -> None:
    args = parse_args()
    tokenizer = AutoTokenizer.from_pretrained(args.model)
    raw = load_dataset("glue", args.task)
    encoded = raw.map(tokenize_fn(tokenizer, args.task, args.max_length, args.static_padding), batched=True)
    num_labels = raw["train"].features["label"].num_classes
    model = AutoModelForSequenceClassification.from_pretrained(args.model, num_labels=num_labels)

    if args.static_padding:
        collator = DataCollatorWithPadding(tokenizer, padding="max_length", max_length=args.max_length)  # ok
    else:
        collator = DataCollatorWithPadding(tokenizer)  # may: compilation

    use_fp16 = os.environ.get("USE_FP16", "1") == "1"  # may: precision
    training_args = TrainingArguments(
        output_dir=args.output_dir,
        per_device_train_batch_size=args.batch_size,
        per_device_eval_batch_size=args.batch_size * 2,
        learning_rate=2e-5,
        num_train_epochs=3,
        fp16=use_fp16,  # expect: precision
        bf16=not args.no_bf16 and not use_fp16,  # expect: precision
        half_precision_backend="apex",  # expect: precision; may: kernels
        eval_strategy="epoch",
        save_strategy="epoch",
        metric_for_best_model="accuracy",
        greater_is_better=True,
        load_best_model_at_end=True,
        torch_compile=False,  # ok
        report_to="none",
    )
    trainer = Trainer(
        model=model,
        args=training_args,
        train_dataset=encoded["train"],
        eval_dataset=encoded["validation"],
        tokenizer=tokenizer,
        data_collator=collator,
        compute_metrics=compute_metrics,
    )
    trainer.train()

    eval_args = TrainingArguments(
        output_dir=os.path.join(args.output_dir, "eval"),
        per_device_eval_batch_size=64,
        fp16=args.fp16 or torch.cuda.is_available(),  # expect: precision; may: device
        bf16=False,  # ok
        report_to="none",
    )
    evaluator = Trainer(model=trainer.model, args=eval_args, data_collator=collator, compute_metrics=compute_metrics)
    print(evaluator.evaluate(encoded["validation"]))


if __name__ == "__main__":
    main()
