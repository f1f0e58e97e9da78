"""Ask the driver which GPUs are present (used by the launcher to size jobs)."""
from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from typing import List


@dataclass
class GpuInfo:
    index: int
    name: str
    memory_mb: int


def query_gpus() -> List[GpuInfo]:
    exe = shutil.which("nvidia-smi")  # may: device, environment, runtime
    if exe is None:
        return []
    proc = subprocess.run(
        [exe, "--query-gpu=index,name,memory.total", "--format=csv,noheader,nounits"],
        capture_output=True,
        text=True,
        check=False,
    )  # may: device, environment, runtime
    if proc.returncode != 0:
        return []
    gpus = []
    for line in proc.stdout.strip().splitlines():
        index, name, mem = [part.strip() for part in line.split(",")]
        gpus.append(GpuInfo(int(index), name, int(mem)))
    return gpus
