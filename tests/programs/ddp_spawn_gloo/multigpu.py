# DDP with mp.spawn. Defaults to one process per visible GPU and NCCL.
#   python multigpu.py 10 5                      # every GPU in CUDA_VISIBLE_DEVICES
#   CUDA_VISIBLE_DEVICES=0,1 python multigpu.py 10 5
#   python multigpu.py 10 5 --cpu --world_size 2  # gloo on CPU, for debugging
import os
import json
import argparse

import torch
import torch.nn.functional as F
import torch.multiprocessing as mp
import torch.distributed as dist
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler
from torch.nn.parallel import DistributedDataParallel as DDP

from datautils import MyTrainDataset


def ddp_setup(rank, world_size, backend):
    os.environ.setdefault("MASTER_ADDR", "localhost")
    os.environ.setdefault("MASTER_PORT", "12356")
    if backend == "nccl":
        torch.cuda.set_device(rank)
    dist.init_process_group(backend=backend, rank=rank, world_size=world_size)


class ConvNet(torch.nn.Module):
    """treats the 20 features as a 1-d signal"""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv1d(1, 8, kernel_size=3, padding=1)
        self.bn = torch.nn.BatchNorm1d(8)
        self.fc = torch.nn.Linear(8 * 20, 4)

    def forward(self, x):
        x = F.relu(self.bn(self.conv(x.unsqueeze(1))))
        return self.fc(x.flatten(1))


def worker(rank, world_size, args):
    backend = "gloo" if args.cpu else args.backend
    if args.cpu:
        torch.set_num_threads(1)  # world_size CPU workers share the cores, avoid oversubscription
    ddp_setup(rank, world_size, backend)
    device = torch.device("cpu") if args.cpu else torch.device(f"cuda:{rank}")
    torch.manual_seed(42)

    dataset = MyTrainDataset(600, seed=1)
    sampler = DistributedSampler(dataset, num_replicas=world_size, rank=rank, shuffle=True, seed=42)
    loader = DataLoader(dataset, batch_size=args.batch_size, sampler=sampler,
                        pin_memory=not args.cpu, num_workers=0)

    model = ConvNet().to(device)
    if not args.cpu:
        # keep BN statistics in sync across GPUs
        model = torch.nn.SyncBatchNorm.convert_sync_batchnorm(model)
        model = DDP(model, device_ids=[rank], output_device=rank)
    else:
        model = DDP(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)

    epoch_losses = []
    for epoch in range(args.total_epochs):
        sampler.set_epoch(epoch)
        model.train()
        tot = torch.zeros(2, device=device)
        for x, y in loader:
            x = x.to(device, non_blocking=True)
            y = y.to(device, non_blocking=True)
            optimizer.zero_grad(set_to_none=True)
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            optimizer.step()
            tot += torch.stack([loss.detach() * x.size(0), torch.tensor(float(x.size(0)), device=device)])
        dist.all_reduce(tot, op=dist.ReduceOp.SUM)
        epoch_losses.append(round((tot[0] / tot[1]).item(), 6))
        if rank == 0:
            print(f"[{device}] epoch {epoch} loss {epoch_losses[-1]:.4f}")
            if epoch % args.save_every == 0:
                torch.save(model.module.state_dict(), "checkpoint.pt")
        dist.barrier()

    # evaluate on rank 0's copy, all ranks hold identical weights after DDP
    model.eval()
    correct = torch.zeros(1, device=device)
    with torch.no_grad():
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            correct += (model(x).argmax(1) == y).sum()
    dist.all_reduce(correct)
    if rank == 0:
        print("RESULT " + json.dumps({"epoch_losses": epoch_losses,
                                      "train_acc": round(correct.item() / len(sampler) / world_size, 6)}))
    dist.destroy_process_group()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="simple distributed training job")
    parser.add_argument("total_epochs", type=int)
    parser.add_argument("save_every", type=int)
    parser.add_argument("--batch_size", default=32, type=int)
    parser.add_argument("--backend", default="nccl", type=str)
    parser.add_argument("--world_size", default=None, type=int, help="defaults to the number of visible GPUs")
    parser.add_argument("--cpu", action="store_true", help="run on CPU with the gloo backend")
    args = parser.parse_args()

    world_size = args.world_size if args.world_size is not None else torch.cuda.device_count()
    if world_size < 1:
        raise SystemExit(f"No CUDA devices visible (CUDA_VISIBLE_DEVICES={os.environ.get('CUDA_VISIBLE_DEVICES')!r}); "
                         "pass --cpu --world_size N to run on CPU")
    mp.spawn(worker, args=(world_size, args), nprocs=world_size, join=True)
