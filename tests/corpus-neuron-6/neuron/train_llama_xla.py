# target: neuron
"""Data-parallel fine-tuning on Trn1 -- still on the torch-xla path."""
import os

os.environ["XLA_USE_BF16"] = "1"  # expect: precision
os.environ.setdefault("NEURON_CC_FLAGS", "--model-type=transformer --auto-cast=none")  # may: precision

import torch
import torch.distributed as dist
import torch_xla.core.xla_model as xm  # expect: runtime
import torch_xla.distributed.parallel_loader as pl  # expect: runtime
import torch_xla.distributed.xla_backend  # expect: runtime
from torch.nn.parallel import DistributedDataParallel as DDP
from transformers import AutoModelForCausalLM, default_data_collator

SEQ_LEN = 2048


def main():
    dist.init_process_group("xla")  # may: runtime, distributed
    device = xm.xla_device()  # may: runtime
    world = xm.xrt_world_size()  # may: runtime
    rank = xm.get_ordinal()  # may: runtime

    model = AutoModelForCausalLM.from_pretrained("TinyLlama/TinyLlama-1.1B-Chat-v1.0").to(device)
    model = DDP(model, gradient_as_bucket_view=True)  # ok
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5)

    data = torch.load("data/packed_2048.pt")  # pre-packed, every row is SEQ_LEN tokens
    sampler = torch.utils.data.distributed.DistributedSampler(data, num_replicas=world, rank=rank, shuffle=True)
    loader = torch.utils.data.DataLoader(data, batch_size=1, sampler=sampler, collate_fn=default_data_collator)
    device_loader = pl.MpDeviceLoader(loader, device)  # may: runtime

    model.train()
    for step, batch in enumerate(device_loader):
        loss = model(**batch).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        xm.mark_step()  # may: runtime
        if step % 50 == 0:
            xm.master_print(f"step {step} loss {loss.detach().to('cpu').item():.4f}")  # may: runtime
    xm.save(model.module.state_dict(), "ckpt/final.pt")  # may: runtime


if __name__ == "__main__":
    main()
