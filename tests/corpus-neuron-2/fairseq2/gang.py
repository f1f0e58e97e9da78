# Copyright (c) Meta Platforms, Inc. and affiliates.
# All rights reserved.
#
# This source code is licensed under the BSD-style license found in the
# LICENSE file in the root directory of this source tree.

"""Process-group ("gang") set-up, in the style of ``fairseq2.gang``.

On CUDA hosts the root gang uses NCCL for device tensors; object collectives
always go through Gloo.  # ok
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from datetime import timedelta

import torch
import torch.distributed as dist

log = logging.getLogger(__name__)

DEFAULT_PG_BACKEND = "nccl"  # expect: distributed

# Variables dumped to the log at start-up so that hangs can be diagnosed.
_LOGGED_ENV_VARS = (
    "RANK",
    "WORLD_SIZE",
    "LOCAL_RANK",
    "LOCAL_WORLD_SIZE",
    "CUDA_VISIBLE_DEVICES",  # expect: environment
    "MASTER_ADDR",  # ok
)


@dataclass
class GangConfig:
    backend: str = os.environ.get("FAIRSEQ2_PG_BACKEND", "nccl")  # expect: distributed
    timeout: timedelta = field(default_factory=lambda: timedelta(minutes=15))
    monitored: bool = False
    high_priority: bool = False


class GangError(RuntimeError):
    pass


def _mixed_backend() -> str:
    # Gloo for CPU tensors (object collectives), NCCL for device tensors.
    return "cpu:gloo,cuda:nccl"  # expect: distributed


def _log_env() -> None:
    for name in _LOGGED_ENV_VARS:
        log.info("%s=%s", name, os.environ.get(name, "<unset>"))


def setup_root_gang(device: torch.device, config: GangConfig | None = None) -> "dist.ProcessGroup":
    """Initialise the default process group for ``device``.

    Falls back to gloo when nccl is unavailable.  # ok
    """
    config = config or GangConfig()

    if dist.is_initialized():
        raise GangError("The default process group is already initialized.")

    _log_env()

    backend = config.backend
    if backend == "auto":
        backend = dist.Backend.NCCL if torch.cuda.is_available() else dist.Backend.GLOO  # expect: distributed; may: device
    elif backend == "mixed":
        backend = _mixed_backend()

    log.info("Initializing the root gang (backend=%s, falling back to gloo if nccl is missing).", backend)  # ok

    dist.init_process_group(backend, timeout=config.timeout)  # ok

    pg = dist.group.WORLD
    if pg is None:
        raise GangError("The root process group is not available.")

    if device.type == "neuron":  # ok
        log.info("Root gang created on a Neuron device; collectives use the neuron backend.")  # ok

    return pg


def setup_parallel_gangs(root: "dist.ProcessGroup", *, tp_size: int = 1) -> dict[str, "dist.ProcessGroup"]:
    world_size = dist.get_world_size(root)
    if world_size % tp_size != 0:
        raise GangError(f"world size {world_size} is not a multiple of tp_size {tp_size}")

    rank = dist.get_rank(root)
    gangs: dict[str, dist.ProcessGroup] = {}
    for start in range(0, world_size, tp_size):
        ranks = list(range(start, start + tp_size))
        pg = dist.new_group(ranks, backend=dist.get_backend(root))  # ok
        if rank in ranks:
            gangs["tp"] = pg
    return gangs
