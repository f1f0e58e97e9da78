"""ImageNet DDP training, torchvision-reference style."""
import argparse
import datetime
import os

import torch
import torch.distributed as dist
import torch.utils.data
import torchvision
from torch.nn.parallel import DistributedDataParallel


def get_args_parser():
    parser = argparse.ArgumentParser(description="PyTorch Classification Training", add_help=True)
    parser.add_argument("--data-path", default="/datasets01/imagenet_full_size/061417/", type=str)
    parser.add_argument("--model", default="resnet18", type=str)
    parser.add_argument("--device", default="cuda", type=str, help="device (Use cuda or cpu Default: cuda)")  # expect: device
    parser.add_argument("-b", "--batch-size", default=32, type=int)
    parser.add_argument("--epochs", default=90, type=int)
    parser.add_argument("--lr", default=0.1, type=float)
    parser.add_argument("--dist-url", default="env://", type=str)
    parser.add_argument("--dist-backend", default="nccl", type=str)  # expect: distributed
    parser.add_argument("--amp", action="store_true", help="Use torch.cuda.amp for mixed precision training")  # ok
    return parser


def init_distributed_mode(args):
    if "RANK" in os.environ and "WORLD_SIZE" in os.environ:
        args.rank = int(os.environ["RANK"])
        args.world_size = int(os.environ["WORLD_SIZE"])
        args.gpu = int(os.environ["LOCAL_RANK"])
    elif "SLURM_PROCID" in os.environ:
        args.rank = int(os.environ["SLURM_PROCID"])
        args.gpu = args.rank % torch.cuda.device_count()  # expect: device|runtime
    else:
        print("Not using distributed mode")
        args.distributed = False
        return

    args.distributed = True
    torch.cuda.set_device(args.gpu)  # expect: device|runtime
    print(f"| distributed init (rank {args.rank}): {args.dist_url}", flush=True)
    dist.init_process_group(
        backend=args.dist_backend,  # may: distributed
        init_method=args.dist_url,
        world_size=args.world_size,
        rank=args.rank,
        timeout=datetime.timedelta(minutes=30),
    )
    dist.barrier()


def train_one_epoch(model, criterion, optimizer, loader, device, scaler=None):
    model.train()
    for image, target in loader:
        image, target = image.to(device, non_blocking=True), target.to(device, non_blocking=True)
        with torch.cuda.amp.autocast(enabled=scaler is not None):  # expect: precision|device
            loss = criterion(model(image), target)
        optimizer.zero_grad()
        if scaler is not None:
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
        else:
            loss.backward()
            optimizer.step()


def main(args):
    init_distributed_mode(args)
    device = torch.device(args.device)
    dataset = torchvision.datasets.ImageFolder(os.path.join(args.data_path, "train"), torchvision.transforms.ToTensor())
    sampler = torch.utils.data.distributed.DistributedSampler(dataset) if args.distributed else None
    loader = torch.utils.data.DataLoader(dataset, batch_size=args.batch_size, sampler=sampler, num_workers=16)

    model = torchvision.models.get_model(args.model).to(device)
    if args.distributed:
        model = DistributedDataParallel(model, device_ids=[args.gpu])  # may: device
    criterion = torch.nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    scaler = torch.cuda.amp.GradScaler() if args.amp else None  # expect: precision|device

    for epoch in range(args.epochs):
        if args.distributed:
            sampler.set_epoch(epoch)
        train_one_epoch(model, criterion, optimizer, loader, device, scaler)


if __name__ == "__main__":
    main(get_args_parser().parse_args())
