"""
Multi-node DDP training, launched on every node with e.g.

    torchrun --nproc_per_node=8 --nnodes=2 --node_rank=0 --rdzv_id=456 \
        --rdzv_backend=c10d --rdzv_endpoint=172.31.43.139:29603 multinode.py 50 10

Single node smoke test:
    torchrun --standalone --nproc_per_node=2 multinode.py 4 1
"""
import os
import json
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.distributed as dist
from torch.utils.data import Dataset, DataLoader
from torch.utils.data.distributed import DistributedSampler
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.distributed import init_process_group, destroy_process_group

from datautils import MyTrainDataset

DEFAULT_BACKEND = os.environ.get("DIST_BACKEND", "nccl")


def ddp_setup(backend):
    init_process_group(backend=backend)
    if backend == "nccl":
        torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))


class Trainer:
    def __init__(self, model, train_data, optimizer, save_every, snapshot_path, backend):
        self.local_rank = int(os.environ["LOCAL_RANK"])
        self.global_rank = int(os.environ["RANK"])
        if backend == "nccl":
            self.device = torch.device(f"cuda:{self.local_rank}")
        else:
            self.device = torch.device("cpu")
        self.model = model.to(self.device)
        self.train_data = train_data
        self.optimizer = optimizer
        self.save_every = save_every
        self.epochs_run = 0
        self.snapshot_path = snapshot_path
        self.history = []
        if os.path.exists(snapshot_path):
            print("Loading snapshot")
            self._load_snapshot(snapshot_path)

        if self.device.type == "cuda":
            self.model = DDP(self.model, device_ids=[self.local_rank])
        else:
            self.model = DDP(self.model)

    def _load_snapshot(self, snapshot_path):
        snapshot = torch.load(snapshot_path, map_location=self.device)
        self.model.load_state_dict(snapshot["MODEL_STATE"])
        self.epochs_run = snapshot["EPOCHS_RUN"]
        print(f"Resuming training from snapshot at Epoch {self.epochs_run}")

    def _run_batch(self, source, targets):
        self.optimizer.zero_grad()
        output = self.model(source)
        loss = F.cross_entropy(output, targets)
        loss.backward()
        self.optimizer.step()
        return loss.detach()

    def _run_epoch(self, epoch):
        b_sz = len(next(iter(self.train_data))[0])
        print(f"[GPU{self.global_rank}] Epoch {epoch} | Batchsize: {b_sz} | Steps: {len(self.train_data)}")
        self.train_data.sampler.set_epoch(epoch)
        running = torch.zeros((), device=self.device)
        for source, targets in self.train_data:
            source = source.to(self.device, non_blocking=True)
            targets = targets.to(self.device, non_blocking=True)
            running += self._run_batch(source, targets)
        running /= len(self.train_data)
        dist.all_reduce(running)
        running /= dist.get_world_size()
        self.history.append(round(running.item(), 6))

    def _save_snapshot(self, epoch):
        snapshot = {
            "MODEL_STATE": self.model.module.state_dict(),
            "EPOCHS_RUN": epoch + 1,
        }
        torch.save(snapshot, self.snapshot_path)
        print(f"Epoch {epoch} | Training snapshot saved at {self.snapshot_path}")

    def train(self, max_epochs: int):
        for epoch in range(self.epochs_run, max_epochs):
            self._run_epoch(epoch)
            if self.local_rank == 0 and epoch % self.save_every == 0:
                self._save_snapshot(epoch)
            dist.barrier()


def load_train_objs():
    train_set = MyTrainDataset(768, seed=3)
    model = nn.Sequential(nn.Linear(20, 64), nn.Tanh(), nn.Linear(64, 4))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    return train_set, model, optimizer


def prepare_dataloader(dataset: Dataset, batch_size: int, pin_memory: bool):
    return DataLoader(
        dataset,
        batch_size=batch_size,
        pin_memory=pin_memory,
        shuffle=False,
        sampler=DistributedSampler(dataset),
    )


def main(save_every: int, total_epochs: int, batch_size: int, backend: str, snapshot_path: str):
    ddp_setup(backend)
    torch.manual_seed(1234)
    dataset, model, optimizer = load_train_objs()
    train_data = prepare_dataloader(dataset, batch_size, pin_memory=(backend == "nccl"))
    trainer = Trainer(model, train_data, optimizer, save_every, snapshot_path, backend)
    trainer.train(total_epochs)
    if trainer.global_rank == 0:
        print("RESULT " + json.dumps({"epoch_losses": trainer.history}))
    destroy_process_group()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="simple distributed training job")
    parser.add_argument("total_epochs", type=int, help="Total epochs to train the model")
    parser.add_argument("save_every", type=int, help="How often to save a snapshot")
    parser.add_argument("--batch_size", default=32, type=int, help="Input batch size on each device (default: 32)")
    parser.add_argument("--backend", default=DEFAULT_BACKEND, choices=["nccl", "gloo"],
                        help="process group backend (default: $DIST_BACKEND or nccl)")
    parser.add_argument("--snapshot_path", default="snapshot.pt", type=str)
    args = parser.parse_args()
    main(args.save_every, args.total_epochs, args.batch_size, args.backend, args.snapshot_path)
