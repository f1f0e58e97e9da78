"""Collate functions and dataset preprocessing for the ASR / text pipelines."""
from functools import partial

import torch
from datasets import load_dataset
from torch.nn.utils.rnn import pad_sequence
from transformers import AutoTokenizer

MAX_TOKENS = 256
PAD_ID = 0


def collate_dynamic(batch):
    ids = [torch.tensor(ex["input_ids"]) for ex in batch]
    labels = torch.tensor([ex["label"] for ex in batch])
    input_ids = pad_sequence(ids, batch_first=True, padding_value=PAD_ID)  # expect: compilation
    return {"input_ids": input_ids, "attention_mask": (input_ids != PAD_ID).long(), "labels": labels}


def collate_fixed(batch):
    out = torch.full((len(batch), MAX_TOKENS), PAD_ID, dtype=torch.long)  # ok
    for i, ex in enumerate(batch):
        ids = ex["input_ids"][:MAX_TOKENS]
        out[i, : len(ids)] = torch.tensor(ids)
    return {"input_ids": out, "attention_mask": (out != PAD_ID).long(), "labels": torch.tensor([ex["label"] for ex in batch])}


def collate_audio(batch):
    feats = [ex["features"] for ex in batch]
    lengths = torch.tensor([f.shape[0] for f in feats])
    feats = torch.nn.utils.rnn.pad_sequence(feats, batch_first=True)  # expect: compilation
    return feats, lengths


def build_datasets(model_name="distilbert-base-uncased"):
    tok = AutoTokenizer.from_pretrained(model_name)
    raw = load_dataset("imdb")

    def encode(batch):
        return tok(batch["text"], truncation=True, padding=True)  # expect: compilation

    def tokenize_and_align(examples, tokenizer):
        return tokenizer(examples["text"], truncation=True, max_length=MAX_TOKENS, padding="longest")  # expect: compilation

    def to_fixed_length(examples):
        return tok(examples["text"], truncation=True, max_length=MAX_TOKENS, padding="max_length")  # ok

    def to_buckets(examples):
        return tok(examples["text"], truncation=True, max_length=MAX_TOKENS, padding=True, pad_to_multiple_of=64)  # ok

    train = raw["train"].map(encode, batched=True)
    test = raw["test"].map(partial(tokenize_and_align, tokenizer=tok), batched=True, batch_size=512)
    fixed = raw["unsupervised"].map(to_fixed_length, batched=True)
    bucketed = raw["train"].map(to_buckets, batched=True)
    lengths = raw["train"].map(lambda b: tok(b["text"], padding="longest"), batched=True)  # expect: compilation
    return train, test, fixed, bucketed, lengths
