# target: xla
"""Data-parallel fine-tuning on Trainium through torch-xla (PJRT runtime).

Launch with:
    torchrun --nproc_per_node=32 train/xla_train.py
"""
import argparse
import os

os.environ["XLA_USE_BF16"] = "1"  # expect: precision

import torch
import torch.distributed as dist
import torch_xla.core.xla_model as xm  # ok
import torch_xla.distributed.parallel_loader as pl  # ok
import torch_xla.distributed.xla_backend  # ok
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def build_model() -> torch.nn.Module:
    return torch.nn.Sequential(torch.nn.Linear(784, 512), torch.nn.ReLU(), torch.nn.Linear(512, 10))


def make_loader(batch_size: int) -> DataLoader:
    ds = TensorDataset(torch.randn(60_000, 784), torch.randint(0, 10, (60_000,)))
    sampler = DistributedSampler(ds, num_replicas=dist.get_world_size(), rank=dist.get_rank(), shuffle=True)
    return DataLoader(ds, batch_size=batch_size, sampler=sampler, drop_last=True, num_workers=2)


def train(args: argparse.Namespace) -> None:
    dist.init_process_group("xla", init_method="xla://")  # ok
    device = xm.xla_device()  # ok
    model = build_model().to(device)
    model = DDP(model, gradient_as_bucket_view=True)  # ok
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01, fused=True)  # expect: kernels
    loss_fn = torch.nn.CrossEntropyLoss()
    loader = pl.MpDeviceLoader(make_loader(args.batch_size), device)  # ok

    for epoch in range(args.epochs):
        model.train()
        for step, (x, y) in enumerate(loader):
            optimizer.zero_grad(set_to_none=True)
            loss = loss_fn(model(x), y)
            loss.backward()
            optimizer.step()
            xm.mark_step()  # ok
            if step % 50 == 0:
                xm.master_print(f"epoch {epoch} step {step} loss {loss.item():.4f}")
    if os.environ.get("XLA_DOWNCAST_BF16") == "1":  # may: precision
        xm.master_print("note: weights were downcast to bf16 during training")
    xm.save(model.state_dict(), args.output)  # ok


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--output", default="checkpoint.pt")
    train(parser.parse_args())
