"""ImageNet training (derived from the pytorch/examples script)."""
import argparse
import os
import time

import torch
import torch.backends.cudnn as cudnn
import torch.distributed as dist
import torch.nn as nn
import torch.nn.parallel
import torch.optim
import torch.utils.data
import torch.utils.data.distributed
import torchvision.datasets as datasets
import torchvision.models as models
import torchvision.transforms as transforms

parser = argparse.ArgumentParser(description="PyTorch ImageNet Training")
parser.add_argument("data", metavar="DIR", nargs="?", default="imagenet")
parser.add_argument("-a", "--arch", default="resnet50")
parser.add_argument("-j", "--workers", default=8, type=int)
parser.add_argument("--epochs", default=90, type=int)
parser.add_argument("-b", "--batch-size", default=256, type=int)
parser.add_argument("--lr", "--learning-rate", default=0.1, type=float, dest="lr")
parser.add_argument("--dist-url", default="env://", type=str)
parser.add_argument("--dist-backend", default="nccl", type=str, help="distributed backend")  # expect: distributed
parser.add_argument("--gpu", default=None, type=int, help="GPU id to use.")
parser.add_argument("--amp", action="store_true", help="use torch.cuda.amp mixed precision")  # ok
parser.add_argument("--multiprocessing-distributed", action="store_true")


def main():
    args = parser.parse_args()
    args.distributed = int(os.environ.get("WORLD_SIZE", 1)) > 1
    if args.distributed:
        args.rank = int(os.environ["RANK"])
        args.gpu = int(os.environ["LOCAL_RANK"])
        backend = args.dist_backend if torch.cuda.is_available() else "gloo"  # may: device, distributed
        dist.init_process_group(backend=backend, init_method=args.dist_url)  # may: distributed

    model = models.__dict__[args.arch]()
    if args.gpu is not None:
        torch.cuda.set_device(args.gpu)  # expect: device
        model.cuda(args.gpu)  # expect: device
    if args.distributed:
        model = nn.parallel.DistributedDataParallel(model, device_ids=[args.gpu])  # may: device
    criterion = nn.CrossEntropyLoss().cuda(args.gpu)  # expect: device
    optimizer = torch.optim.SGD(model.parameters(), args.lr, momentum=0.9, weight_decay=1e-4)
    scaler = torch.cuda.amp.GradScaler(enabled=args.amp)  # expect: precision; may: device
    cudnn.benchmark = True  # may: kernels, device

    normalize = transforms.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225])
    train_dataset = datasets.ImageFolder(
        os.path.join(args.data, "train"),
        transforms.Compose([transforms.RandomResizedCrop(224), transforms.RandomHorizontalFlip(), transforms.ToTensor(), normalize]),
    )
    sampler = torch.utils.data.distributed.DistributedSampler(train_dataset) if args.distributed else None
    loader = torch.utils.data.DataLoader(
        train_dataset, batch_size=args.batch_size, shuffle=(sampler is None),
        num_workers=args.workers, pin_memory=True, sampler=sampler,
    )
    for epoch in range(args.epochs):
        if sampler is not None:
            sampler.set_epoch(epoch)
        train(loader, model, criterion, optimizer, scaler, args)


def train(loader, model, criterion, optimizer, scaler, args):
    model.train()
    end = time.time()
    for i, (images, target) in enumerate(loader):
        images = images.cuda(args.gpu, non_blocking=True)  # expect: device
        target = target.cuda(args.gpu, non_blocking=True)  # expect: device
        with torch.autocast("cuda", dtype=torch.float16, enabled=args.amp):  # expect: precision; may: device
            output = model(images)
            loss = criterion(output, target)
        optimizer.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        if i % 100 == 0:
            print(f"[{i}/{len(loader)}] loss {loss.item():.4f} time {time.time() - end:.3f}")
        end = time.time()


if __name__ == "__main__":
    main()
