#!/usr/bin/env python3
""" ImageNet Training Script

This is intended to be a lean and easily modifiable ImageNet training script that reproduces ImageNet
training results with some of the latest networks and training techniques. It favours canonical PyTorch
and standard Python style over trying to be able to 'do it all.' That said, it offers quite a few speed
and training result improvements over the usual PyTorch example scripts. Repurpose as you see fit.

NVIDIA CUDA specific speedups adopted from NVIDIA Apex examples
(https://github.com/NVIDIA/apex/tree/master/examples/imagenet)

Hacked together by / Copyright 2020 Ross Wightman (https://github.com/rwightman)
"""
import argparse
import logging
import os
import time
from contextlib import suppress
from datetime import datetime
from functools import partial

import torch
import torch.nn as nn
import yaml
from torch.nn.parallel import DistributedDataParallel as NativeDDP

from timm import utils
from timm.data import create_dataset, create_loader, resolve_data_config, Mixup
from timm.layers import convert_sync_batchnorm, set_fast_norm
from timm.loss import LabelSmoothingCrossEntropy, SoftTargetCrossEntropy
from timm.models import create_model, safe_model_name, resume_checkpoint, model_parameters
from timm.optim import create_optimizer_v2, optimizer_kwargs
from timm.scheduler import create_scheduler_v2, scheduler_kwargs
from timm.utils import ApexScaler, NativeScaler

try:
    from apex import amp  # may: kernels, dependencies
    from apex.parallel import DistributedDataParallel as ApexDDP  # may: kernels, dependencies
    from apex.parallel import convert_syncbn_model  # may: kernels, dependencies
    has_apex = True
except ImportError:
    has_apex = False

has_compile = hasattr(torch, 'compile')

_logger = logging.getLogger('train')

# The first arg parser parses out only the --config argument, this argument is used to
# load a yaml file containing key-values that override the defaults for the main parser below
config_parser = parser = argparse.ArgumentParser(description='Training Config', add_help=False)
parser.add_argument('-c', '--config', default='', type=str, metavar='FILE',
                    help='YAML config file specifying default arguments')

parser = argparse.ArgumentParser(description='PyTorch ImageNet Training')

# Dataset parameters
group = parser.add_argument_group('Dataset parameters')
group.add_argument('data', nargs='?', metavar='DIR', const=None,
                   help='path to dataset (positional is *deprecated*, use --data-dir)')
group.add_argument('--data-dir', metavar='DIR',
                   help='path to dataset (root dir)')
group.add_argument('--dataset', metavar='NAME', default='',
                   help='dataset type + name ("<type>/<name>") (default: ImageFolder or ImageTar if empty)')

# Model parameters
group = parser.add_argument_group('Model parameters')
group.add_argument('--model', default='resnet50', type=str, metavar='MODEL',
                   help='Name of model to train (default: "resnet50")')
group.add_argument('--pretrained', action='store_true', default=False,
                   help='Start with pretrained version of specified network (if avail)')
group.add_argument('--num-classes', type=int, default=None, metavar='N',
                   help='number of label classes (Model default if None)')
group.add_argument('-b', '--batch-size', type=int, default=128, metavar='N',
                   help='Input batch size for training (default: 128)')
group.add_argument('--channels-last', action='store_true', default=False,
                   help='Use channels_last memory layout')
group.add_argument('--fast-norm', default=False, action='store_true',
                   help='enable experimental fast-norm')
scripting_group = group.add_mutually_exclusive_group()
scripting_group.add_argument('--torchscript', dest='torchscript', action='store_true',
                             help='torch.jit.script the full model')  # ok
scripting_group.add_argument('--torchcompile', nargs='?', type=str, default=None, const='inductor',
                             help="Enable compilation w/ specified backend (default: inductor).")  # may: compilation
group.add_argument('--torchcompile-mode', type=str, default=None,
                   help="torch.compile mode (default: None).")

# Device & distributed
group = parser.add_argument_group('Device parameters')
group.add_argument('--device', default='cuda', type=str,
                   help="Device (accelerator) to use.")  # expect: device
group.add_argument('--amp', action='store_true', default=False,
                   help='use NVIDIA Apex AMP or Native AMP for mixed precision training')  # may: precision
group.add_argument('--amp-dtype', default='float16', type=str,
                   help='lower precision AMP dtype (default: float16)')  # expect: precision
group.add_argument('--amp-impl', default='native', type=str,
                   help='AMP impl to use, "native" or "apex" (default: native)')
group.add_argument('--dist-backend', default='nccl', type=str,
                   help='Distributed backend (default: "nccl")')  # expect: distributed
group.add_argument('--dist-url', default='env://', type=str,
                   help='url used to set up distributed training')
group.add_argument('--synchronize-step', action='store_true', default=False,
                   help='torch.cuda.synchronize() end of each step')  # ok
group.add_argument("--local_rank", default=0, type=int)

# Optimizer / schedule
group = parser.add_argument_group('Optimizer parameters')
group.add_argument('--opt', default='sgd', type=str, metavar='OPTIMIZER',
                   help='Optimizer (default: "sgd")')
group.add_argument('--lr', type=float, default=None, metavar='LR',
                   help='learning rate, overrides lr-base if set (default: None)')
group.add_argument('--epochs', type=int, default=300, metavar='N',
                   help='number of epochs to train (default: 300)')
group.add_argument('--smoothing', type=float, default=0.1,
                   help='Label smoothing (default: 0.1)')
group.add_argument('--log-interval', type=int, default=50, metavar='N',
                   help='how many batches to wait before logging training status')


def _parse_args():
    # Do we have a config file to parse?
    args_config, remaining = config_parser.parse_known_args()
    if args_config.config:
        with open(args_config.config, 'r') as f:
            cfg = yaml.safe_load(f)
            parser.set_defaults(**cfg)

    # The main arg parser parses the rest of the args, the usual
    # defaults will have been overridden if config file specified.
    args = parser.parse_args(remaining)

    # Cache the args as a text string to save them in the output dir later
    args_text = yaml.safe_dump(args.__dict__, default_flow_style=False)
    return args, args_text


def main():
    utils.setup_default_logging()
    args, args_text = _parse_args()

    if torch.cuda.is_available():  # may: device
        torch.backends.cuda.matmul.allow_tf32 = True  # may: precision, kernels
        torch.backends.cudnn.benchmark = True  # may: kernels, device

    args.prefetcher = True
    args.grad_accum_steps = 1
    device = utils.init_distributed_device(args)
    if args.distributed:
        _logger.info(
            'Training in distributed mode with multiple processes, 1 device per process.'
            f'Process {args.rank}, total {args.world_size}, device {args.device}.')
    else:
        _logger.info(f'Training with a single process on 1 device ({args.device}).')
    assert args.rank >= 0

    # resolve AMP arguments based on PyTorch / Apex availability
    use_amp = None
    amp_dtype = torch.float16
    if args.amp:
        if args.amp_impl == 'apex':
            assert has_apex, 'AMP impl specified as APEX but APEX is not installed.'
            use_amp = 'apex'
            assert args.amp_dtype == 'float16'
        else:
            use_amp = 'native'
            assert args.amp_dtype in ('float16', 'bfloat16')
        if args.amp_dtype == 'bfloat16':
            amp_dtype = torch.bfloat16

    utils.random_seed(42, args.rank)

    if args.fast_norm:
        set_fast_norm()

    model = create_model(
        args.model,
        pretrained=args.pretrained,
        num_classes=args.num_classes,
    )

    if args.local_rank == 0:
        _logger.info(
            f'Model {safe_model_name(args.model)} created, param count:{sum([m.numel() for m in model.parameters()])}')

    data_config = resolve_data_config(vars(args), model=model, verbose=utils.is_primary(args))

    # move model to GPU, enable channels last layout if set
    model.to(device=device)
    if args.channels_last:
        model.to(memory_format=torch.channels_last)

    if args.distributed and args.sync_bn:
        model = convert_sync_batchnorm(model)

    if args.torchscript:
        assert not args.torchcompile
        assert not use_amp == 'apex', 'Cannot use APEX AMP with torchscripted model'
        model = torch.jit.script(model)  # may: compilation

    optimizer = create_optimizer_v2(
        model,
        **optimizer_kwargs(cfg=args),
        **utils.learning_rate_kwargs(cfg=args),
    )

    # setup automatic mixed-precision (AMP) loss scaling and op casting
    amp_autocast = suppress  # do nothing
    loss_scaler = None
    if use_amp == 'apex':
        assert device.type == 'cuda'  # may: device
        model, optimizer = amp.initialize(model, optimizer, opt_level='O1')  # may: precision, kernels
        loss_scaler = ApexScaler()
    elif use_amp == 'native':
        amp_autocast = partial(torch.autocast, device_type=device.type, dtype=amp_dtype)  # ok
        if device.type in ('cuda',) and amp_dtype == torch.float16:  # may: device
            # loss scaler only used for float16 (half) dtype, bfloat16 does not need it
            loss_scaler = NativeScaler(device=device.type)
        if utils.is_primary(args):
            _logger.info('Using native Torch AMP. Training in mixed precision.')
    else:
        if utils.is_primary(args):
            _logger.info('AMP not enabled. Training in float32.')

    # setup distributed training
    if args.distributed:
        model = NativeDDP(model, device_ids=[device], broadcast_buffers=True)

    if args.torchcompile:
        # torch compile should be done after DDP
        assert has_compile, 'A version of torch w/ torch.compile() is required for --compile, possibly a nightly.'
        model = torch.compile(model, backend=args.torchcompile, mode=args.torchcompile_mode)  # expect: compilation

    dataset_train = create_dataset(
        args.dataset,
        root=args.data_dir,
        split='train',
        is_training=True,
        batch_size=args.batch_size,
    )
    loader_train = create_loader(
        dataset_train,
        input_size=data_config['input_size'],
        batch_size=args.batch_size,
        is_training=True,
        interpolation=data_config['interpolation'],
        mean=data_config['mean'],
        std=data_config['std'],
        distributed=args.distributed,
        device=device,
        use_prefetcher=args.prefetcher,
    )

    train_loss_fn = LabelSmoothingCrossEntropy(smoothing=args.smoothing).to(device=device)

    lr_scheduler, num_epochs = create_scheduler_v2(
        optimizer,
        **scheduler_kwargs(args),
        updates_per_epoch=len(loader_train),
    )

    for epoch in range(num_epochs):
        if args.distributed and hasattr(loader_train.sampler, 'set_epoch'):
            loader_train.sampler.set_epoch(epoch)
        model.train()
        for batch_idx, (input, target) in enumerate(loader_train):
            with amp_autocast():
                output = model(input)
                loss = train_loss_fn(output, target)
            optimizer.zero_grad()
            if loss_scaler is not None:
                loss_scaler(loss, optimizer, parameters=model_parameters(model))
            else:
                loss.backward()
                optimizer.step()
            if args.synchronize_step:
                if device.type == 'cuda':  # may: device
                    torch.cuda.synchronize()  # may: device, runtime
                elif device.type == 'npu':
                    torch.npu.synchronize()
            if batch_idx % args.log_interval == 0 and utils.is_primary(args):
                _logger.info(f'Train: {epoch} [{batch_idx:>4d}/{len(loader_train)}]  Loss: {loss.item():#.3g}')
        lr_scheduler.step(epoch + 1)


if __name__ == '__main__':
    main()
