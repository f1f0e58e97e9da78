"""Environment helpers used by the launchers and the worker pool."""
import os
import subprocess
import sys
from contextlib import contextmanager

import torch

# variables we forward to child workers
VISIBILITY_VARS = ("CUDA_VISIBLE_DEVICES", "NEURON_RT_VISIBLE_CORES", "OMP_NUM_THREADS")  # expect: environment
SCRUB_VARS = ["CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES"]  # expect: environment


def child_env(extra=None):
    env = {k: os.environ[k] for k in VISIBILITY_VARS if k in os.environ}
    env.update(extra or {})
    return env


@contextmanager
def hidden_devices():
    saved = {k: os.environ.pop(k) for k in SCRUB_VARS if k in os.environ}
    try:
        yield
    finally:
        os.environ.update(saved)


def run_worker(worker_id: int, script: str) -> subprocess.Popen:
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": str(worker_id), "WORKER_ID": str(worker_id)}  # expect: environment
    return subprocess.Popen([sys.executable, script], env=env)


def run_neuron_worker(worker_id: int, script: str, cores_per_worker: int = 2) -> subprocess.Popen:
    first = worker_id * cores_per_worker
    env = {**os.environ, "NEURON_RT_VISIBLE_CORES": f"{first}-{first + cores_per_worker - 1}"}  # ok
    return subprocess.Popen([sys.executable, script], env=env)


def run_shell_worker(worker_id: int, script: str) -> int:
    return subprocess.call(f"CUDA_VISIBLE_DEVICES={worker_id} {sys.executable} {script}", shell=True)  # expect: environment


def describe_build() -> dict:
    return {
        "torch": torch.__version__,
        "cuda": torch.version.cuda,  # expect: environment|dependencies
        "git": os.environ.get("GIT_SHA", "unknown"),
    }
