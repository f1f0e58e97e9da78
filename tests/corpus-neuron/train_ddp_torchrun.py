"""Keyword-spotting DDP training loop launched with torchrun (structure follows the torchvision references).

    torchrun --nproc_per_node=8 train_ddp_torchrun.py --data-path /datasets/speech_commands --dist-backend nccl
"""
import argparse
import datetime
import os
import time

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.nn.utils.rnn import pad_sequence
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler

DEFAULT_BACKEND = dist.Backend.NCCL  # expect: distributed
BACKEND = "nccl"  # expect: distributed

torch._dynamo.config.automatic_dynamic_shapes = True  # expect: compilation


def get_args_parser():
    parser = argparse.ArgumentParser(description="Keyword spotting DDP training", add_help=True)
    parser.add_argument("--data-path", default="/datasets/speech_commands", type=str)
    parser.add_argument("--epochs", default=30, type=int)
    parser.add_argument("--batch-size", default=64, type=int, help="per-process batch size")
    parser.add_argument("--lr", default=1e-3, type=float)
    parser.add_argument("--workers", default=8, type=int)
    parser.add_argument("--dist-backend", default="nccl", type=str, help="distributed backend")  # expect: distributed
    parser.add_argument("--dist-url", default="env://", type=str)
    parser.add_argument("--compile-mode", default="max-autotune", choices=["default", "reduce-overhead", "max-autotune"])  # may: compilation
    parser.add_argument("--no-compile", action="store_true")
    parser.add_argument("--cpu", action="store_true", help="debug on CPU with gloo")
    return parser


class SpeechCommands(Dataset):
    def __init__(self, root, split="train"):
        self.items = np.load(os.path.join(root, f"{split}_index.npy"), allow_pickle=True)

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        path, label = self.items[i]
        feats = torch.from_numpy(np.load(path)).float()  # (frames, 80) log-mel, frames vary per clip
        return {"features": feats, "label": int(label)}


def collate_variable_length(batch):
    feats = [b["features"] for b in batch]
    lengths = torch.tensor([f.shape[0] for f in feats])
    padded = pad_sequence(feats, batch_first=True, padding_value=0.0)  # expect: compilation
    targets = torch.tensor([b["label"] for b in batch])
    return padded, lengths, targets


class KWSNet(nn.Module):
    def __init__(self, n_mels=80, hidden=256, n_classes=35):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv1d(n_mels, hidden, 5, padding=2), nn.GELU(), nn.Conv1d(hidden, hidden, 5, padding=2), nn.GELU())
        self.head = nn.Linear(hidden, n_classes)

    def forward(self, x, lengths):
        h = self.conv(x.transpose(1, 2))                      # (B, H, T)
        t = torch.arange(h.shape[-1], device=h.device)
        valid = (t[None, :] < lengths[:, None]).unsqueeze(1)  # mask padded frames
        pooled = (h * valid).sum(-1) / lengths[:, None].clamp(min=1)
        return self.head(pooled)


def resolve_backend(args) -> str:
    if args.dist_backend != "auto":
        return args.dist_backend
    return "nccl" if args.world_size > 1 and not args.cpu else "gloo"  # expect: distributed


def eval_group():
    # metrics are all-reduced on a separate group so they never queue behind gradient buckets
    return dist.new_group(backend=os.environ.get("EVAL_DIST_BACKEND", "nccl"))  # expect: distributed


def init_distributed(args):
    args.rank = int(os.environ["RANK"])
    args.world_size = int(os.environ["WORLD_SIZE"])
    args.local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(args.local_rank)  # expect: device
    dist.init_process_group(
        backend=resolve_backend(args),
        init_method=args.dist_url,
        world_size=args.world_size,
        rank=args.rank,
        timeout=datetime.timedelta(minutes=30),
    )
    dist.barrier()


def main(args):
    init_distributed(args)
    device = torch.device(f"cuda:{args.local_rank}")  # expect: device

    train_ds = SpeechCommands(args.data_path, "train")
    sampler = DistributedSampler(train_ds, shuffle=True)
    loader = DataLoader(train_ds, batch_size=args.batch_size, sampler=sampler, num_workers=args.workers,
                        collate_fn=collate_variable_length, pin_memory=True, drop_last=True)

    model = KWSNet().cuda(args.local_rank)  # expect: device
    model = DDP(model, device_ids=[args.local_rank])  # may: device
    if not args.no_compile:
        compile_mode = args.compile_mode
        model = torch.compile(model, mode=compile_mode)  # expect: compilation
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.05)
    criterion = nn.CrossEntropyLoss(label_smoothing=0.1)
    metrics_pg = eval_group()

    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        model.train()
        correct, seen, start = 0, 0, time.time()
        for feats, lengths, targets in loader:
            feats, lengths, targets = feats.to(device, non_blocking=True), lengths.to(device), targets.to(device)  # ok
            logits = model(feats, lengths)
            loss = criterion(logits, targets)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            correct += (logits.argmax(-1) == targets).sum().item()
            seen += targets.numel()
        totals = torch.tensor([correct, seen], device=device)
        dist.all_reduce(totals, group=metrics_pg)
        acc = np.float64(totals[0].item()) / max(1, totals[1].item())  # ok
        if args.rank == 0:
            print(f"epoch {epoch}: train acc {acc:.4f} ({time.time() - start:.0f}s)")

    dist.destroy_process_group()


if __name__ == "__main__":
    main(get_args_parser().parse_args())
