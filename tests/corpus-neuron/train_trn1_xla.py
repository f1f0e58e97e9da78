# target: xla
"""BERT-large pretraining (phase 1) on Trn1 with torch-neuronx / PyTorch-XLA and DDP over the xla backend.

    neuron_parallel_compile torchrun --nproc_per_node=32 train_trn1_xla.py --steps 10
    torchrun --nproc_per_node=32 train_trn1_xla.py --steps 10000
"""
import argparse
import os

os.environ["XLA_USE_BF16"] = "1"  # expect: precision
os.environ["NEURON_CC_FLAGS"] = "--model-type=transformer --auto-cast=matmult"  # expect: precision

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch_xla.core.xla_model as xm  # noqa: E402  # ok
import torch_xla.distributed.parallel_loader as pl  # noqa: E402  # ok
import torch_xla.distributed.xla_backend  # noqa: E402,F401  # ok
from torch.nn.parallel import DistributedDataParallel as DDP  # noqa: E402
from torch.utils.data import DataLoader  # noqa: E402
from torch.utils.data.distributed import DistributedSampler  # noqa: E402
from transformers import BertConfig, BertForPreTraining  # noqa: E402


def parse():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=10000)
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--lr", type=float, default=4e-4)
    p.add_argument("--data", default="/fsx/bert_pretrain_wikicorpus_tokenized_hdf5_seqlen128")
    return p.parse_args()


def main():
    args = parse()
    dist.init_process_group("xla")  # ok
    device = xm.xla_device()  # ok
    world, rank = dist.get_world_size(), dist.get_rank()

    model = BertForPreTraining(BertConfig.from_pretrained("bert-large-uncased")).to(device)  # ok
    model = DDP(model, gradient_as_bucket_view=True, broadcast_buffers=False)  # may: distributed
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01, fused=True)  # expect: kernels

    from bert_data import PretrainingHDF5Dataset  # local helper, fixed seq_len 128 shards

    ds = PretrainingHDF5Dataset(args.data)
    loader = DataLoader(ds, batch_size=args.batch_size, sampler=DistributedSampler(ds, num_replicas=world, rank=rank), drop_last=True, num_workers=2)  # ok
    device_loader = pl.MpDeviceLoader(loader, device)  # ok

    model.train()
    for step, batch in enumerate(device_loader):
        out = model(**batch)
        out.loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        xm.mark_step()  # ok
        if step % 100 == 0:
            xm.add_step_closure(lambda s=step, l=out.loss: print(f"step {s} loss {l.item():.4f}"))  # ok
        if step >= args.steps:
            break
    xm.save(model.state_dict(), "bert_large_phase1.pt")  # ok


if __name__ == "__main__":
    main()
