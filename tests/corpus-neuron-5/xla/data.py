# target: xla
"""Tokenisation and collators for the XLA fine-tuning scripts."""
import torch
import torch._dynamo.config  # may: compilation
from transformers import AutoTokenizer, DataCollatorWithPadding

torch._dynamo.config.automatic_dynamic_shapes = True  # expect: compilation

tokenizer = AutoTokenizer.from_pretrained("roberta-base")
MAX_LEN = 256


def tokenize_dynamic(examples):
    return tokenizer(examples["text"], padding=True, truncation=True)  # expect: compilation


def tokenize_static(examples, max_length: int = MAX_LEN):
    return tokenizer(examples["text"], padding="max_length", truncation=True, max_length=max_length)  # ok


dynamic_collator = DataCollatorWithPadding(tokenizer)  # may: compilation
bucketed_collator = DataCollatorWithPadding(tokenizer, padding="longest", pad_to_multiple_of=64)  # may: compilation
static_collator = DataCollatorWithPadding(tokenizer, padding="max_length", max_length=MAX_LEN)  # ok


def host_length_histogram(dataset) -> dict:
    import numpy as np

    lengths = np.array([len(x) for x in dataset["input_ids"]])
    long_ones = lengths[lengths > MAX_LEN]  # ok
    values, counts = np.unique(lengths, return_counts=True)  # ok
    return {"truncated": int(long_ones.size), "hist": dict(zip(values.tolist(), counts.tolist()))}
