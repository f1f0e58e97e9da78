# target: xla
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
import torch_xla.core.xla_model as xm  # ok
import torch_xla.distributed.xla_backend  # ok

os.environ["XLA_DOWNCAST_BF16"] = "1"  # expect: precision
os.environ["NEURON_CC_FLAGS"] = "--model-type=transformer --retry_failed_compilation"  # ok


def main():
    dist.init_process_group("xla")  # ok
    device = xm.xla_device()  # ok
    model = nn.Sequential(nn.Linear(1024, 4096), nn.GELU(), nn.Linear(4096, 1024)).to(device)
    model = DDP(model, gradient_as_bucket_view=True)  # ok
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)  # expect: kernels
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=1000)
    for step in range(1000):
        x = torch.randn(32, 1024, device=device)
        loss = (model(x) - x).pow(2).mean()
        loss.backward()
        optimizer.step()
        sched.step()
        optimizer.zero_grad()
        xm.mark_step()  # ok
    if xm.is_master_ordinal():
        xm.save(model.state_dict(), "mlp.pt")  # ok


if __name__ == "__main__":
    main()
