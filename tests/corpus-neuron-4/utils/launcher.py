"""Spawn one worker process per accelerator, locally or over ssh.

Used by scripts/sweep.py for hyper-parameter sweeps where every trial owns a
single device.
"""
import os
import shlex
import subprocess
import sys
from typing import Dict, List, Sequence

# variables forwarded from the parent environment to each worker
PASSTHROUGH_VARS = ("CUDA_VISIBLE_DEVICES", "PYTHONPATH", "HF_HOME", "WANDB_PROJECT")  # expect: environment
# variables removed before a CPU-only trial
SCRUB_VARS = ["CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES"]  # expect: environment; may: device


def worker_env(device_id: int) -> Dict[str, str]:
    env = {k: os.environ[k] for k in PASSTHROUGH_VARS if k in os.environ}
    env.update({"CUDA_VISIBLE_DEVICES": str(device_id), "OMP_NUM_THREADS": "4"})  # expect: environment
    return env


def cpu_env() -> Dict[str, str]:
    env = dict(os.environ)
    for var in SCRUB_VARS:
        env.pop(var, None)
    return env


def spawn_local(device_ids: Sequence[int], script: str, extra: List[str]) -> List[subprocess.Popen]:
    procs = []
    for dev in device_ids:
        child_env = {**os.environ, "CUDA_VISIBLE_DEVICES": str(dev)}  # expect: environment
        procs.append(subprocess.Popen([sys.executable, script, *extra], env=child_env))  # ok
    return procs


def remote_command(host: str, device_id: int, script: str, extra: List[str]) -> str:
    args = " ".join(shlex.quote(a) for a in extra)
    return f"ssh {host} CUDA_VISIBLE_DEVICES={device_id} python {shlex.quote(script)} {args}"  # expect: environment


def wait_all(procs: List[subprocess.Popen]) -> int:
    codes = [p.wait() for p in procs]
    failed = [c for c in codes if c != 0]
    if failed:
        print(f"{len(failed)} of {len(codes)} workers failed", file=sys.stderr)
    return max(codes, default=0)


if __name__ == "__main__":
    n = int(os.environ.get("NUM_WORKERS", "2"))
    sys.exit(wait_all(spawn_local(range(n), sys.argv[1], sys.argv[2:])))
