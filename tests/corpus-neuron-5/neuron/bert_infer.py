# target: neuron
"""Batch classification with a traced BERT (compiled for sequence length 128)."""
from typing import List

import torch
# torch_neuronx registers the Neuron ops used by the traced graph
import torch_neuronx  # may: runtime
from transformers import AutoTokenizer

tokenizer = AutoTokenizer.from_pretrained("bert-base-cased-finetuned-mrpc")
model = torch.jit.load("bert_neuron_b8_s128.pt")


def classify(texts: List[str]) -> List[int]:
    enc = tokenizer(texts, padding=True, truncation=True, return_tensors="pt")  # expect: compilation
    with torch.no_grad():
        logits = model(enc["input_ids"], enc["attention_mask"])[0]
    return logits.argmax(-1).tolist()


def classify_longest(texts: List[str], tok=tokenizer) -> torch.Tensor:
    enc = tok(texts, padding="longest", return_tensors="pt")  # expect: compilation
    return model(enc["input_ids"], enc["attention_mask"])[0]


def classify_bucketed(texts: List[str]) -> torch.Tensor:
    enc = tokenizer(texts, padding="longest", pad_to_multiple_of=128, truncation=True, max_length=512, return_tensors="pt")  # may: compilation
    return model(enc["input_ids"], enc["attention_mask"])[0]


def classify_fixed(texts: List[str]) -> torch.Tensor:
    enc = tokenizer(texts, padding="max_length", max_length=128, truncation=True, return_tensors="pt")  # ok
    return model(enc["input_ids"], enc["attention_mask"])[0]
