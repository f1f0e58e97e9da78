# target: xla
"""Data-parallel causal-LM fine-tuning on Trainium through torch-xla (PJRT runtime)."""
import os

os.environ.setdefault("XLA_DOWNCAST_BF16", "1")  # expect: precision
os.environ["NEURON_CC_FLAGS"] = os.environ.get("NEURON_CC_FLAGS", "") + " --model-type=transformer"  # ok

import torch
import torch.distributed as dist
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process-group backend)
from datasets import load_dataset
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.nn.utils.rnn import pad_sequence
from torch.utils.data import DataLoader, DistributedSampler
from transformers import AutoModelForCausalLM, AutoTokenizer

BACKEND = "xla" if os.environ.get("PJRT_DEVICE") else "nccl"  # expect: distributed
MODEL_ID = os.environ.get("MODEL_ID", "gpt2")
LR = float(os.environ.get("LR", "1e-4"))
BATCH = int(os.environ.get("BATCH", "8"))


def collate(batch, pad_id):
    ids = [torch.tensor(ex["input_ids"]) for ex in batch]
    return pad_sequence(ids, batch_first=True, padding_value=pad_id)  # expect: compilation


def main():
    dist.init_process_group(BACKEND, init_method="xla://" if BACKEND == "xla" else "env://")
    device = xm.xla_device()

    tok = AutoTokenizer.from_pretrained(MODEL_ID)
    tok.pad_token = tok.pad_token or tok.eos_token
    ds = load_dataset("wikitext", "wikitext-2-raw-v1", split="train")
    ds = ds.map(lambda ex: tok(ex["text"], truncation=True, max_length=512), remove_columns=["text"])
    sampler = DistributedSampler(ds, num_replicas=xm.xrt_world_size(), rank=xm.get_ordinal(), shuffle=True)
    loader = DataLoader(ds, batch_size=BATCH, sampler=sampler, collate_fn=lambda b: collate(b, tok.pad_token_id))

    model = AutoModelForCausalLM.from_pretrained(MODEL_ID).to(device)
    model = DDP(model, gradient_as_bucket_view=True)  # ok
    optimizer = torch.optim.AdamW(model.parameters(), lr=LR, fused=True)  # expect: kernels

    model.train()
    for step, ids in enumerate(pl.MpDeviceLoader(loader, device)):
        loss = model(input_ids=ids, labels=ids).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        xm.mark_step()
        if step % 50 == 0:
            xm.master_print(f"step {step} loss {loss.item():.4f}")
    xm.save(model.module.state_dict(), "checkpoint.pt")


if __name__ == "__main__":
    main()
