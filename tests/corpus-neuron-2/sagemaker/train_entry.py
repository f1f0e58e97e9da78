"""SageMaker training entry point for a BERT text classifier.

SageMaker passes hyper-parameters as command-line flags and describes the
cluster through SM_* environment variables.  Runs on ml.p4d (A100) and on
ml.trn1 instances.
"""
import argparse
import json
import logging
import os
import sys

import torch
import torch.distributed as dist
from datasets import load_from_disk
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler
from transformers import AutoModelForSequenceClassification, AutoTokenizer, get_linear_schedule_with_warmup

logger = logging.getLogger(__name__)
logger.setLevel(logging.INFO)
logger.addHandler(logging.StreamHandler(sys.stdout))

if os.environ.get("SM_CURRENT_INSTANCE_TYPE", "").startswith("ml.trn1"):
    os.environ["XLA_USE_BF16"] = "1"  # expect: precision
    os.environ.setdefault("XLA_DOWNCAST_BF16", "1")  # expect: precision


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--train_batch_size", type=int, default=32)
    parser.add_argument("--learning_rate", type=float, default=5e-5)
    parser.add_argument("--model_name", type=str, default="bert-base-uncased")
    parser.add_argument("--max_length", type=int, default=128)
    parser.add_argument("--backend", type=str, default=os.environ.get("SM_DIST_BACKEND", "nccl"))  # expect: distributed
    parser.add_argument("--model_dir", type=str, default=os.environ["SM_MODEL_DIR"])
    parser.add_argument("--training_dir", type=str, default=os.environ["SM_CHANNEL_TRAIN"])
    parser.add_argument("--hosts", type=list, default=json.loads(os.environ["SM_HOSTS"]))
    parser.add_argument("--current_host", type=str, default=os.environ["SM_CURRENT_HOST"])
    parser.add_argument("--num_gpus", type=int, default=int(os.environ.get("SM_NUM_GPUS", 0)))  # may: environment
    return parser.parse_args()


def make_collate(tokenizer, max_length):
    def _collate(batch):
        enc = tokenizer(
            [ex["text"] for ex in batch],
            padding="longest",
            truncation=True,
            max_length=max_length,
            return_tensors="pt",
        )  # expect: compilation
        enc["labels"] = torch.tensor([ex["label"] for ex in batch])
        return enc

    return _collate


def train(args):
    is_distributed = len(args.hosts) > 1 or args.num_gpus > 1
    use_cuda = args.num_gpus > 0
    logger.info("Distributed training - %s, number of gpus - %d", is_distributed, args.num_gpus)
    device = torch.device("cuda" if use_cuda else "cpu")  # expect: device

    if is_distributed:
        world_size = len(args.hosts)
        host_rank = args.hosts.index(args.current_host)
        os.environ["MASTER_ADDR"] = args.hosts[0]  # expect-one(sm-rdzv): distributed
        os.environ["MASTER_PORT"] = "7777"  # expect-one(sm-rdzv): distributed
        os.environ["WORLD_SIZE"] = str(world_size)
        os.environ["RANK"] = str(host_rank)
        dist.init_process_group(backend=args.backend, rank=host_rank, world_size=world_size)  # ok
        logger.info(
            "Initialized the distributed environment: '%s' backend on %d nodes. Current host rank is %d.",
            args.backend, dist.get_world_size(), dist.get_rank(),
        )  # ok

    tokenizer = AutoTokenizer.from_pretrained(args.model_name)
    dataset = load_from_disk(args.training_dir)
    sampler = DistributedSampler(dataset) if is_distributed else None
    loader = DataLoader(
        dataset,
        batch_size=args.train_batch_size,
        shuffle=sampler is None,
        sampler=sampler,
        collate_fn=make_collate(tokenizer, args.max_length),
    )

    model = AutoModelForSequenceClassification.from_pretrained(args.model_name, num_labels=2).to(device)
    if is_distributed:
        model = DDP(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.learning_rate)
    scheduler = get_linear_schedule_with_warmup(optimizer, 0, args.epochs * len(loader))

    model.train()
    for epoch in range(1, args.epochs + 1):
        if sampler is not None:
            sampler.set_epoch(epoch)
        for step, batch in enumerate(loader):
            batch = {k: v.to(device) for k, v in batch.items()}
            loss = model(**batch).loss
            loss.backward()
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad()
            if step % 100 == 0:
                logger.info("Train Epoch: %d [%d/%d] Loss: %.6f", epoch, step, len(loader), loss.item())

    if not is_distributed or dist.get_rank() == 0:
        unwrapped = model.module if is_distributed else model
        unwrapped.save_pretrained(args.model_dir)
        tokenizer.save_pretrained(args.model_dir)


if __name__ == "__main__":
    train(parse_args())
