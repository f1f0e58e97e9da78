# target: xla
"""GPT-2 fine-tuning on trn1 with PyTorch/XLA (torch-neuronx) and DDP.

Follows the data-parallel layout of the Neuron DDP tutorial: one process per
NeuronCore, xla process-group backend, MpDeviceLoader for input.
"""
import os

os.environ["XLA_USE_BF16"] = "1"  # expect: precision
os.environ.setdefault("NEURON_CC_FLAGS", "--model-type=transformer --auto-cast=all")  # expect: precision

import torch
import torch.distributed as dist
import torch_xla.core.xla_model as xm  # ok
import torch_xla.distributed.parallel_loader as pl  # ok
import torch_xla.distributed.xla_backend  # ok
from datasets import load_dataset
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler
from transformers import AutoTokenizer, GPT2LMHeadModel

MAX_LEN = 1024
BATCH_SIZE = 8
EPOCHS = 1


def main():
    dist.init_process_group("xla")  # ok
    device = xm.xla_device()  # ok
    rank = xm.get_ordinal()
    world_size = xm.xrt_world_size()

    tokenizer = AutoTokenizer.from_pretrained("gpt2")
    tokenizer.pad_token = tokenizer.eos_token

    def collate(batch):
        return tokenizer(
            [b["text"] for b in batch], padding=True, truncation=True, max_length=MAX_LEN, return_tensors="pt"
        )  # expect: compilation

    ds = load_dataset("wikitext", "wikitext-103-raw-v1", split="train").filter(lambda ex: len(ex["text"]) > 0)
    sampler = DistributedSampler(ds, num_replicas=world_size, rank=rank, shuffle=True)
    loader = DataLoader(ds, batch_size=BATCH_SIZE, sampler=sampler, collate_fn=collate, drop_last=True)
    train_device_loader = pl.MpDeviceLoader(loader, device)

    model = GPT2LMHeadModel.from_pretrained("gpt2").to(device)
    model = DDP(model, gradient_as_bucket_view=True)  # ok
    optimizer = torch.optim.AdamW(model.parameters(), lr=5e-5, fused=True)  # expect: kernels

    running = []
    model.train()
    for epoch in range(EPOCHS):
        sampler.set_epoch(epoch)
        for step, batch in enumerate(train_device_loader):
            outputs = model(**batch, labels=batch["input_ids"])
            loss = outputs.loss
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            xm.mark_step()  # ok
            if step % 50 == 0:
                host_loss = loss.detach().cpu().to(torch.float64)  # ok
                running.append(host_loss.item())
                xm.master_print(f"epoch {epoch} step {step} loss {host_loss.item():.4f}")

    xm.master_print("mean loss {:.4f}".format(sum(running) / max(len(running), 1)))

    if rank == 0:
        cpu_model = model.module.cpu().eval()
        scripted = torch.jit.script(cpu_model)  # expect: compilation
        frozen = torch.jit.freeze(scripted)  # expect: compilation
        frozen.save("gpt2_frozen.pt")


if __name__ == "__main__":
    main()
