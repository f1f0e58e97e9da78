# target: neuron
"""Llama pre-training loop, half-ported from the GPU script to TorchNeuron."""
import os

import torch
import torch.distributed as dist
import torch_xla.core.xla_model as xm  # expect-any(llama-xla-mix): runtime
import torch_xla.distributed.parallel_loader as pl  # expect-any(llama-xla-mix): runtime
from torch.utils.data import DataLoader, DistributedSampler
from transformers import LlamaConfig, LlamaForCausalLM


def build_model() -> torch.nn.Module:
    cfg = LlamaConfig(hidden_size=2048, intermediate_size=5504, num_hidden_layers=16, num_attention_heads=16)
    return LlamaForCausalLM(cfg)


def main(dataset):
    dist.init_process_group(backend="xla")  # may: runtime, distributed
    device = xm.xla_device()  # expect-any(llama-xla-mix): runtime; may: device
    model = build_model().to(device)
    model = torch.compile(model, backend="neuron")  # ok
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4, fused=True)  # may: kernels
    sampler = DistributedSampler(dataset, num_replicas=dist.get_world_size(), rank=dist.get_rank())
    loader = pl.MpDeviceLoader(DataLoader(dataset, batch_size=8, sampler=sampler, drop_last=True), device)  # expect-any(llama-xla-mix): runtime
    for step, batch in enumerate(loader):
        loss = model(**batch).loss
        loss.backward()
        xm.optimizer_step(optimizer)  # expect-any(llama-xla-mix): runtime
        optimizer.zero_grad(set_to_none=True)
        xm.mark_step()  # expect-any(llama-xla-mix): runtime
        if step % 10 == 0:
            xm.master_print(f"step {step} loss {loss.item():.4f}")  # expect-any(llama-xla-mix): runtime
    if int(os.environ.get("RANK", 0)) == 0:
        xm.save(model.state_dict(), "llama_neuron.pt")  # expect-any(llama-xla-mix): runtime
