#!/usr/bin/env python
# coding=utf-8
""" Finetuning a small sequence classification model (GLUE-style), synthetic data.

    python run_glue.py --output_dir out --do_train --do_eval --fp16 \
        --per_device_train_batch_size 32 --num_train_epochs 3
"""
import json
import logging
import os
import sys
from dataclasses import dataclass, field
from typing import Optional

import numpy as np
import torch
import torch.nn as nn

from transformers import (
    EvalPrediction,
    HfArgumentParser,
    ModelOutput,
    Trainer,
    TrainingArguments,
    default_data_collator,
    set_seed,
)

logger = logging.getLogger(__name__)


@dataclass
class DataTrainingArguments:
    task_name: Optional[str] = field(default="synthetic-sst2", metadata={"help": "The name of the task to train on"})
    max_seq_length: int = field(default=24, metadata={"help": "The maximum total input sequence length after tokenization."})
    max_train_samples: Optional[int] = field(default=None)
    max_eval_samples: Optional[int] = field(default=None)
    vocab_size: int = field(default=200)


@dataclass
class ModelArguments:
    model_name_or_path: str = field(default="tiny-bert-uncased", metadata={"help": "Path to pretrained model or model identifier"})
    hidden_size: int = field(default=64)
    num_hidden_layers: int = field(default=2)
    num_attention_heads: int = field(default=4)


class TinyBertForSequenceClassification(nn.Module):
    def __init__(self, vocab_size, hidden_size, num_layers, num_heads, num_labels, max_len):
        super().__init__()
        self.embeddings = nn.Embedding(vocab_size, hidden_size, padding_idx=0)
        self.position_embeddings = nn.Embedding(max_len, hidden_size)
        layer = nn.TransformerEncoderLayer(hidden_size, num_heads, dim_feedforward=4 * hidden_size,
                                           dropout=0.0, batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers, enable_nested_tensor=False)
        self.pooler = nn.Sequential(nn.Linear(hidden_size, hidden_size), nn.Tanh())
        self.classifier = nn.Linear(hidden_size, num_labels)
        self.num_labels = num_labels

    def forward(self, input_ids, attention_mask=None, labels=None):
        pos = torch.arange(input_ids.size(1), device=input_ids.device)
        h = self.embeddings(input_ids) + self.position_embeddings(pos)
        pad_mask = attention_mask == 0 if attention_mask is not None else None
        h = self.encoder(h, src_key_padding_mask=pad_mask)
        logits = self.classifier(self.pooler(h[:, 0]))
        loss = None
        if labels is not None:
            loss = nn.functional.cross_entropy(logits.float(), labels)
        return ModelOutput(loss=loss, logits=logits)


def build_synthetic_glue(n, max_len, vocab_size, seed):
    """sentiment-ish task: label is 1 when 'positive' tokens (ids < 40) outnumber 'negative' ones (40..79)"""
    rng = np.random.default_rng(seed)
    examples = []
    for _ in range(n):
        length = int(rng.integers(6, max_len))
        ids = rng.integers(2, vocab_size, size=length - 1)
        pos = int(((ids >= 2) & (ids < 40)).sum())
        neg = int(((ids >= 40) & (ids < 80)).sum())
        label = int(pos > neg)
        input_ids = np.zeros(max_len, dtype=np.int64)
        input_ids[0] = 1  # [CLS]
        input_ids[1:length] = ids
        mask = (input_ids != 0).astype(np.int64)
        examples.append({"input_ids": torch.from_numpy(input_ids), "attention_mask": torch.from_numpy(mask), "labels": label})
    return examples


def main():
    parser = HfArgumentParser((ModelArguments, DataTrainingArguments, TrainingArguments))
    if len(sys.argv) == 2 and sys.argv[1].endswith(".json"):
        with open(os.path.abspath(sys.argv[1])) as f:
            cfg = json.load(f)
        flat = sum([[f"--{k}", str(v)] for k, v in cfg.items()], [])
        model_args, data_args, training_args = parser.parse_args_into_dataclasses(flat)
    else:
        model_args, data_args, training_args = parser.parse_args_into_dataclasses()

    logging.basicConfig(format="%(asctime)s - %(levelname)s - %(name)s - %(message)s",
                        datefmt="%m/%d/%Y %H:%M:%S", handlers=[logging.StreamHandler(sys.stdout)], level=logging.INFO)
    logger.warning(
        f"Process rank: {training_args.local_rank}, device: {training_args.device}, n_gpu: {training_args.n_gpu}, "
        f"16-bits training: {training_args.fp16}, bf16: {training_args.bf16}"
    )
    logger.info(f"Training/evaluation parameters {training_args}")

    set_seed(training_args.seed)

    train_dataset = build_synthetic_glue(384, data_args.max_seq_length, data_args.vocab_size, seed=1)
    eval_dataset = build_synthetic_glue(256, data_args.max_seq_length, data_args.vocab_size, seed=2)
    if data_args.max_train_samples is not None:
        train_dataset = train_dataset[:data_args.max_train_samples]
    if data_args.max_eval_samples is not None:
        eval_dataset = eval_dataset[:data_args.max_eval_samples]

    model = TinyBertForSequenceClassification(data_args.vocab_size, model_args.hidden_size, model_args.num_hidden_layers,
                                              model_args.num_attention_heads, num_labels=2,
                                              max_len=data_args.max_seq_length)

    def compute_metrics(p: EvalPrediction):
        preds = np.argmax(p.predictions, axis=1)
        return {"accuracy": float((preds == p.label_ids).astype(np.float32).mean())}

    trainer = Trainer(
        model=model,
        args=training_args,
        train_dataset=train_dataset if training_args.do_train else None,
        eval_dataset=eval_dataset if training_args.do_eval else None,
        compute_metrics=compute_metrics,
        data_collator=default_data_collator,
    )

    result = {}
    if training_args.do_train:
        train_result = trainer.train()
        trainer.save_model()
        result["train_loss"] = round(train_result.training_loss, 5)
        result["global_step"] = train_result.global_step

    if training_args.do_eval:
        logger.info("*** Evaluate ***")
        metrics = trainer.evaluate(eval_dataset=eval_dataset)
        result["eval_loss"] = round(metrics["eval_loss"], 5)
        result["eval_accuracy"] = round(metrics["eval_accuracy"], 5)
        with open(os.path.join(training_args.output_dir, "eval_results.json"), "w") as f:
            json.dump(metrics, f, indent=2)

    print("RESULT " + json.dumps(result))


if __name__ == "__main__":
    main()
