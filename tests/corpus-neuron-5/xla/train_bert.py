# target: xla
"""Fine-tune BERT on trn1 with the PyTorch/XLA (torch-neuronx) path."""
import os

os.environ["XLA_USE_BF16"] = "1"  # expect: precision
os.environ.setdefault("NEURON_CC_FLAGS", "--model-type=transformer")  # ok

import torch
import torch.distributed as dist
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
import torch_xla.distributed.xla_backend  # noqa: F401
from datasets import load_dataset
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.nn.utils.rnn import pad_sequence
from torch.utils.data import DataLoader, DistributedSampler
from transformers import AutoModelForSequenceClassification, AutoTokenizer

tokenizer = AutoTokenizer.from_pretrained("bert-base-uncased")


def build_dataset():
    ds = load_dataset("glue", "sst2", split="train")
    ds = ds.map(lambda ex: {"input_ids": tokenizer(ex["sentence"], truncation=True, max_length=128)["input_ids"]})
    return ds.with_format("torch", columns=["input_ids", "label"])


def collate(batch):
    input_ids = pad_sequence([b["input_ids"] for b in batch], batch_first=True, padding_value=0)  # expect: compilation
    labels = torch.stack([b["label"] for b in batch])
    return {"input_ids": input_ids, "attention_mask": (input_ids != 0).long(), "labels": labels}


def main():
    dist.init_process_group("xla", init_method="xla://")  # ok
    device = xm.xla_device()
    model = AutoModelForSequenceClassification.from_pretrained("bert-base-uncased").to(device)
    model = DDP(model, gradient_as_bucket_view=True, broadcast_buffers=False)  # ok
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5, fused=True)  # expect: kernels
    train_ds = build_dataset()
    sampler = DistributedSampler(train_ds, num_replicas=dist.get_world_size(), rank=dist.get_rank(), shuffle=True)
    loader = pl.MpDeviceLoader(DataLoader(train_ds, batch_size=16, sampler=sampler, collate_fn=collate, drop_last=True), device)
    model.train()
    for epoch in range(3):
        for step, batch in enumerate(loader):
            optimizer.zero_grad()
            loss = model(**batch).loss
            loss.backward()
            optimizer.step()
            xm.mark_step()  # ok
            if step % 50 == 0:
                xm.master_print(f"epoch {epoch} step {step} loss {loss.detach().cpu().item():.4f}")
    xm.save(model.module.state_dict(), "bert_sst2_trn1.pt")


if __name__ == "__main__":
    main()
