# target: neuron
"""Llama fine-tuning on Trn2 with TorchNeuron (native `neuron` device, torch.compile), half-ported
from the team's Trn1 PyTorch/XLA script: the XLA leftovers are still in it.

    torchrun --nproc_per_node=64 train_torchneuron_mixed.py
"""
import os
import time

import torch
import torch.distributed as dist
import torch.nn as nn
import torch_xla.core.xla_model as xm  # expect: runtime
import torch_xla.distributed.parallel_loader as xpl  # expect: runtime
from datasets import load_dataset
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler
from transformers import AutoModelForCausalLM, AutoTokenizer

MODEL = os.environ.get("MODEL", "meta-llama/Llama-3.2-1B")
SEQ_LEN = 2048


def main():
    dist.init_process_group(backend="neuron")  # ok
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    device = torch.device("neuron", local_rank)  # ok

    tokenizer = AutoTokenizer.from_pretrained(MODEL)
    tokenizer.pad_token = tokenizer.eos_token
    ds = load_dataset("wikitext", "wikitext-103-raw-v1", split="train").filter(lambda e: len(e["text"]) > 64)

    def collate(batch):
        enc = tokenizer([b["text"] for b in batch], padding="max_length", max_length=SEQ_LEN, truncation=True, return_tensors="pt")  # ok
        enc["labels"] = enc["input_ids"].masked_fill(enc["attention_mask"] == 0, -100)
        return enc

    loader = DataLoader(ds, batch_size=1, sampler=DistributedSampler(ds), collate_fn=collate, drop_last=True)
    train_loader = xpl.MpDeviceLoader(loader, device)  # may: runtime

    model = AutoModelForCausalLM.from_pretrained(MODEL, torch_dtype=torch.bfloat16).to(device)  # ok
    model = torch.compile(model)  # expect: compilation
    loss_fn = torch.compile(nn.CrossEntropyLoss(ignore_index=-100), backend="neuron")  # ok
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5, weight_decay=0.0, fused=True)  # ok

    start = time.time()
    for step, batch in enumerate(train_loader):
        logits = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits
        loss = loss_fn(logits[:, :-1].flatten(0, 1).float(), batch["labels"][:, 1:].flatten())
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        xm.mark_step()  # may: runtime
        if step % 10 == 0:
            xm.master_print(f"step {step} loss {loss.item():.4f} elapsed {time.time() - start:.0f}s")  # may: runtime
        if step == 1000:
            break
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
