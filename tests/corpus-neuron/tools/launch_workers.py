"""Spawn one inference worker per accelerator and restart any that exit (a tiny supervisor).

    python -m tools.launch_workers --workers 4 --base-port 8000
"""
from __future__ import annotations

import argparse
import os
import shlex
import signal
import subprocess
import sys
import time

# Variables forwarded from the parent; everything else is dropped so workers are reproducible.
FORWARDED_ENV = ["PATH", "HOME", "HF_HOME", "CUDA_VISIBLE_DEVICES", "PYTHONPATH"]  # expect: environment
DEVICE_MASKS = ("CUDA_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES")  # expect: environment


def build_worker_env(rank: int, world_size: int, base: dict[str, str] | None = None) -> dict[str, str]:
    base = dict(os.environ if base is None else base)
    env = {k: base[k] for k in FORWARDED_ENV if k in base}
    env.update(
        {
            "CUDA_VISIBLE_DEVICES": str(rank),  # expect: environment
            "RANK": str(rank),
            "WORLD_SIZE": str(world_size),
            "OMP_NUM_THREADS": "4",
        }
    )
    return env


def worker_command(rank: int, nproc: int, port: int = 8000) -> list[str]:
    return ["torchrun", f"--nproc_per_node={nproc}", "serve_vllm_openai.py", "--port", str(port + rank)]


def shell_line(rank: int, port: int) -> str:
    return f"CUDA_VISIBLE_DEVICES={rank} {shlex.quote(sys.executable)} serve_vllm_openai.py --port {port}"  # expect: environment


def render_slurm_script(nodes: int) -> str:
    lines = [
        "#!/bin/bash",
        f"#SBATCH --nodes={nodes}",
        "#SBATCH --exclusive",
        "export NCCL_DEBUG=INFO",  # may: distributed
        "export MASTER_ADDR=$(scontrol show hostnames $SLURM_JOB_NODELIST | head -n1)",
        "srun python -m tools.launch_workers --workers 8",
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--workers", type=int, default=int(os.environ.get("NUM_WORKERS", "2")))
    parser.add_argument("--base-port", type=int, default=8000)
    parser.add_argument("--restart-delay", type=float, default=5.0)
    args = parser.parse_args(argv)

    for name in DEVICE_MASKS:
        os.environ.pop(name, None)

    procs: dict[int, subprocess.Popen] = {}
    for rank in range(args.workers):
        env = build_worker_env(rank, args.workers)
        procs[rank] = subprocess.Popen(shell_line(rank, args.base_port + rank), shell=True, env=env)

    monitor_env = {**os.environ, "CUDA_VISIBLE_DEVICES": ",".join(str(i) for i in range(args.workers))}  # expect: environment
    monitor = subprocess.Popen([sys.executable, "-m", "tools.gpu_monitor", "--interval", "5"], env=monitor_env)

    def shutdown(signum, frame):
        for p in (*procs.values(), monitor):
            p.send_signal(signal.SIGTERM)
        sys.exit(0)

    signal.signal(signal.SIGTERM, shutdown)
    signal.signal(signal.SIGINT, shutdown)
    while True:
        for rank, proc in list(procs.items()):
            if proc.poll() is not None:
                print(f"worker {rank} exited with {proc.returncode}; restarting", file=sys.stderr)
                time.sleep(args.restart_delay)
                procs[rank] = subprocess.Popen(shell_line(rank, args.base_port + rank), shell=True, env=build_worker_env(rank, args.workers))
        time.sleep(1.0)


if __name__ == "__main__":
    raise SystemExit(main())
