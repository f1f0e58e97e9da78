#!/usr/bin/env python
# coding=utf-8
"""Minimal causal-LM fine-tuning loop in the style of HF `run_clm_no_trainer.py`.

Launch with torchrun; the script expects one cuda device per process.
"""
import argparse
import logging
import math
import os
import time

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.cuda.amp import autocast, GradScaler
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset, DistributedSampler
from transformers import AutoModelForCausalLM, AutoTokenizer, get_scheduler

try:
    from flash_attn import flash_attn_func  # expect: kernels
    HAS_FLASH = True
except ImportError:
    HAS_FLASH = False

try:
    import deepspeed  # expect: kernels
except ImportError:
    deepspeed = None

logger = logging.getLogger(__name__)

os.environ.setdefault("NCCL_ASYNC_ERROR_HANDLING", "1")  # expect: distributed
os.environ["TOKENIZERS_PARALLELISM"] = "false"  # ok
BACKEND_NAMES = {"cuda": "NVIDIA GPU", "cpu": "host"}  # ok

def parse_args():
    p = argparse.ArgumentParser(description="Fine-tune a causal LM")
    p.add_argument("--model_name_or_path", type=str, default="gpt2")  # ok
    p.add_argument("--device", type=str, default="cuda")  # expect: device
    p.add_argument("--lr", type=float, default=5e-5)  # ok
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--batch_size", type=int, default=8)
    p.add_argument("--fp16", action="store_true", help="use cuda amp with fp16")  # ok
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--resume", type=str, default=None)
    p.add_argument("--output_dir", type=str, default="out")
    return p.parse_args()

class TextDataset(Dataset):
    def __init__(self, tokenizer, texts, max_len=512):
        self.enc = tokenizer(texts, truncation=True, max_length=max_len, padding="max_length", return_tensors="pt")

    def __len__(self):
        return self.enc["input_ids"].size(0)

    def __getitem__(self, i):
        return {k: v[i] for k, v in self.enc.items()}

def setup_distributed(args):
    if "LOCAL_RANK" not in os.environ:  # ok
        return 0, 1, torch.device(args.device)  # ok
    local_rank = int(os.environ["LOCAL_RANK"])  # ok
    dist.init_process_group(backend="nccl")  # expect: distributed
    torch.cuda.set_device(local_rank)  # expect: runtime
    device = torch.device(f"cuda:{local_rank}")  # expect: device
    return local_rank, dist.get_world_size(), device

def set_seed(seed):
    torch.manual_seed(seed)  # ok
    torch.cuda.manual_seed_all(seed)  # expect: runtime
    torch.backends.cudnn.deterministic = True  # expect: runtime
    torch.backends.cudnn.benchmark = False  # expect: runtime

@torch.no_grad()
def evaluate(model, loader, device):
    model.eval()
    total_loss = torch.zeros(1, dtype=torch.float64, device=device)  # expect: precision
    n = 0
    for batch in loader:
        batch = {k: v.to(device) for k, v in batch.items()}  # ok
        with torch.autocast(device_type="cuda", dtype=torch.float16):  # expect: device, precision
            out = model(**batch, labels=batch["input_ids"])
        total_loss += out.loss
        n += 1
    torch.cuda.empty_cache()  # expect: runtime
    model.train()
    return math.exp(total_loss.item() / max(n, 1))  # ok

def main():
    args = parse_args()
    logging.basicConfig(level=logging.INFO)
    set_seed(args.seed)
    local_rank, world_size, device = setup_distributed(args)
    if torch.cuda.is_available():  # expect: runtime
        logger.info("cuda device: %s", torch.cuda.get_device_name(device))  # expect: runtime
    torch.backends.cuda.matmul.allow_tf32 = True  # expect: precision
    torch.backends.cudnn.allow_tf32 = True  # expect: precision
    amp_dtype = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16  # expect: runtime
    logger.info(f"autocast dtype {amp_dtype}, flash={HAS_FLASH}, using cuda: {local_rank}")  # ok

    tokenizer = AutoTokenizer.from_pretrained(args.model_name_or_path)
    tokenizer.pad_token = tokenizer.eos_token
    model = AutoModelForCausalLM.from_pretrained(args.model_name_or_path, torch_dtype=torch.float32)  # ok
    model.to(device)  # ok
    if args.resume:
        state = torch.load(args.resume, map_location="cuda")  # expect: device
        model.load_state_dict(state)
    if world_size > 1:
        model = DDP(model, device_ids=[local_rank], output_device=local_rank)  # expect: distributed
    model = torch.compile(model, mode="max-autotune")  # expect: compilation

    texts = [line.strip() for line in open("train.txt") if line.strip()]
    dataset = TextDataset(tokenizer, texts)
    sampler = DistributedSampler(dataset) if world_size > 1 else None
    loader = DataLoader(dataset, batch_size=args.batch_size, sampler=sampler, shuffle=sampler is None, pin_memory=True)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    scheduler = get_scheduler("linear", optimizer, num_warmup_steps=100, num_training_steps=len(loader) * args.epochs)
    scaler = GradScaler()  # expect: precision

    for epoch in range(args.epochs):
        t0 = time.time()
        for step, batch in enumerate(loader):
            batch = {k: v.to(device, non_blocking=True) for k, v in batch.items()}  # ok
            with autocast(dtype=torch.float16):  # expect: precision
                logits = model(**batch).logits
                loss = F.cross_entropy(logits[:, :-1].flatten(0, 1), batch["input_ids"][:, 1:].flatten())
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad(set_to_none=True)
            scheduler.step()
            if step % 50 == 0 and local_rank == 0:
                logger.info(f"epoch {epoch} step {step} loss {loss.item():.4f} on cuda:{local_rank}")  # ok
                logger.info("peak mem %.2f GB", torch.cuda.max_memory_allocated() / 2**30)  # expect: runtime
        torch.cuda.synchronize()  # expect: runtime
        ppl = evaluate(model, loader, device)
        logger.info("epoch %d took %.1fs, ppl=%.2f", epoch, time.time() - t0, ppl)  # ok
        if local_rank == 0:
            torch.save(model.state_dict(), os.path.join(args.output_dir, f"epoch{epoch}.pt"))  # ok

    if dist.is_initialized():
        dist.destroy_process_group()

if __name__ == "__main__":
    main()
