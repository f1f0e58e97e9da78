# target: neuron
"""Reference TorchNeuron training step on Trn2: the shape a finished port should have. Nothing to report."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from transformers import AutoModelForSequenceClassification, AutoTokenizer

MAX_LEN = 512
COMPILE_KW = {"backend": "neuron", "fullgraph": False}


def batches(tokenizer, texts, labels, batch_size=16):
    for i in range(0, len(texts), batch_size):
        enc = tokenizer(texts[i:i + batch_size], padding="longest", pad_to_multiple_of=128, truncation=True,  # ok
                        max_length=MAX_LEN, return_tensors="pt")
        enc["labels"] = torch.tensor(labels[i:i + batch_size])
        yield enc


def main(texts, labels):
    dist.init_process_group(backend="neuron")  # ok
    device = torch.device("neuron", int(os.environ.get("LOCAL_RANK", 0)))  # ok
    tokenizer = AutoTokenizer.from_pretrained("roberta-base")
    model = AutoModelForSequenceClassification.from_pretrained("roberta-base", num_labels=2)
    model.to(torch.bfloat16)  # ok
    model = DDP(model.to(device))  # ok
    model = torch.compile(model, backend="neuron")  # ok
    head = torch.compile(nn.Linear(2, 2).to(device), **COMPILE_KW)  # ok
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5)
    for enc in batches(tokenizer, texts, labels):
        enc = {k: v.to(device) for k, v in enc.items()}  # ok
        with torch.autocast(device_type="neuron", dtype=torch.bfloat16):  # ok
            out = model(**enc)
        out.loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
    return head
