#!/usr/bin/env python
"""Single-GPU ImageNet-style training with native AMP and checkpoint resume.

    python train_imagenet.py --gpu 0 --amp --epochs 2 --resume checkpoint.pth.tar
"""
import argparse
import json
import os
import shutil
import time

import torch
import torch.nn as nn
import torch.backends.cudnn as cudnn
import torch.utils.data

import tiny_models as models

parser = argparse.ArgumentParser(description='PyTorch ImageNet Training with AMP')
parser.add_argument('-a', '--arch', default='alexnet_tiny', choices=['resnet_tiny', 'alexnet_tiny'])
parser.add_argument('-j', '--workers', default=0, type=int)
parser.add_argument('--epochs', default=2, type=int)
parser.add_argument('--start-epoch', default=0, type=int)
parser.add_argument('-b', '--batch-size', default=64, type=int)
parser.add_argument('--lr', '--learning-rate', default=0.02, type=float, dest='lr')
parser.add_argument('--momentum', default=0.9, type=float)
parser.add_argument('--wd', '--weight-decay', default=5e-4, type=float, dest='weight_decay')
parser.add_argument('-p', '--print-freq', default=5, type=int)
parser.add_argument('--resume', default='', type=str, metavar='PATH')
parser.add_argument('-e', '--evaluate', dest='evaluate', action='store_true')
parser.add_argument('--seed', default=7, type=int)
parser.add_argument('--gpu', default=0, type=int, help='GPU id to use.')
parser.add_argument('--amp', action='store_true', help='use torch.cuda.amp mixed precision')
parser.add_argument('--channels-last', action='store_true')

best_acc1 = 0


def main():
    global best_acc1
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    torch.cuda.manual_seed_all(args.seed)
    cudnn.benchmark = True

    print("Use GPU: {} ({}) for training".format(args.gpu, torch.cuda.get_device_name(args.gpu)))
    torch.cuda.set_device(args.gpu)

    model = models.__dict__[args.arch]()
    model = model.cuda(args.gpu)
    memory_format = torch.channels_last if args.channels_last else torch.contiguous_format
    model = model.to(memory_format=memory_format)

    criterion = nn.CrossEntropyLoss().cuda(args.gpu)
    optimizer = torch.optim.SGD(model.parameters(), args.lr, momentum=args.momentum, weight_decay=args.weight_decay)
    scaler = torch.cuda.amp.GradScaler(enabled=args.amp)

    if args.resume:
        if os.path.isfile(args.resume):
            print("=> loading checkpoint '{}'".format(args.resume))
            loc = 'cuda:{}'.format(args.gpu)
            checkpoint = torch.load(args.resume, map_location=loc)
            args.start_epoch = checkpoint['epoch']
            best_acc1 = checkpoint['best_acc1']
            model.load_state_dict(checkpoint['state_dict'])
            optimizer.load_state_dict(checkpoint['optimizer'])
            scaler.load_state_dict(checkpoint['scaler'])
            print("=> loaded checkpoint '{}' (epoch {})".format(args.resume, checkpoint['epoch']))
        else:
            print("=> no checkpoint found at '{}'".format(args.resume))

    train_dataset = torch.utils.data.TensorDataset(*models.synthetic_imagenet(384, seed=11))
    val_dataset = torch.utils.data.TensorDataset(*models.synthetic_imagenet(128, seed=12))
    train_loader = torch.utils.data.DataLoader(train_dataset, batch_size=args.batch_size, shuffle=True,
                                               num_workers=args.workers, pin_memory=True, drop_last=True)
    val_loader = torch.utils.data.DataLoader(val_dataset, batch_size=args.batch_size, shuffle=False,
                                             num_workers=args.workers, pin_memory=True)

    if args.evaluate:
        validate(val_loader, model, criterion, args)
        return

    losses = []
    for epoch in range(args.start_epoch, args.epochs):
        losses.append(round(train(train_loader, model, criterion, optimizer, scaler, epoch, args, memory_format), 4))
        acc1 = validate(val_loader, model, criterion, args)
        is_best = acc1 > best_acc1
        best_acc1 = max(acc1, best_acc1)
        save_checkpoint({
            'epoch': epoch + 1,
            'arch': args.arch,
            'state_dict': model.state_dict(),
            'best_acc1': best_acc1,
            'optimizer': optimizer.state_dict(),
            'scaler': scaler.state_dict(),
        }, is_best)
        torch.cuda.empty_cache()
        print(f"epoch {epoch}: memory allocated {torch.cuda.memory_allocated(args.gpu) / 2**20:.1f} MiB, "
              f"peak {torch.cuda.max_memory_allocated(args.gpu) / 2**20:.1f} MiB")

    # sanity check: the best checkpoint reloads on this GPU and reproduces its accuracy
    best = torch.load('model_best.pth.tar', map_location=lambda storage, loc: storage.cuda(args.gpu))
    model.load_state_dict(best['state_dict'])
    reloaded_acc = validate(val_loader, model, criterion, args)
    print("RESULT " + json.dumps({"train_loss": losses, "best_acc1": round(float(best_acc1), 3),
                                  "reloaded_acc1": round(float(reloaded_acc), 3)}))


def train(train_loader, model, criterion, optimizer, scaler, epoch, args, memory_format):
    batch_time = AverageMeter('Time', ':6.3f')
    losses = AverageMeter('Loss', ':.4e')
    top1 = AverageMeter('Acc@1', ':6.2f')
    model.train()
    end = time.time()
    for i, (images, target) in enumerate(train_loader):
        images = images.cuda(args.gpu, non_blocking=True).contiguous(memory_format=memory_format)
        target = target.cuda(args.gpu, non_blocking=True)

        with torch.cuda.amp.autocast(enabled=args.amp):
            output = model(images)
            loss = criterion(output, target)

        optimizer.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()

        acc1 = accuracy(output, target)
        losses.update(loss.item(), images.size(0))
        top1.update(acc1, images.size(0))
        torch.cuda.synchronize()
        batch_time.update(time.time() - end)
        end = time.time()
        if i % args.print_freq == 0:
            print(f"Epoch: [{epoch}][{i}/{len(train_loader)}]\t{batch_time}\t{losses}\t{top1}")
    return losses.avg


def validate(val_loader, model, criterion, args):
    losses = AverageMeter('Loss', ':.4e')
    top1 = AverageMeter('Acc@1', ':6.2f')
    model.eval()
    with torch.no_grad():
        for images, target in val_loader:
            images = images.cuda(args.gpu, non_blocking=True)
            target = target.cuda(args.gpu, non_blocking=True)
            with torch.cuda.amp.autocast(enabled=args.amp):
                output = model(images)
                loss = criterion(output, target)
            losses.update(loss.item(), images.size(0))
            top1.update(accuracy(output, target), images.size(0))
    print(' * Acc@1 {top1.avg:.3f} Loss {losses.avg:.4f}'.format(top1=top1, losses=losses))
    return top1.avg


def save_checkpoint(state, is_best, filename='checkpoint.pth.tar'):
    torch.save(state, filename)
    if is_best:
        shutil.copyfile(filename, 'model_best.pth.tar')


class AverageMeter(object):
    def __init__(self, name, fmt=':f'):
        self.name, self.fmt = name, fmt
        self.val = self.avg = self.sum = self.count = 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count

    def __str__(self):
        return ('{name} {val' + self.fmt + '} ({avg' + self.fmt + '})').format(**self.__dict__)


def accuracy(output, target):
    with torch.no_grad():
        return (output.argmax(dim=1) == target).float().mean().item() * 100.0


if __name__ == '__main__':
    main()
