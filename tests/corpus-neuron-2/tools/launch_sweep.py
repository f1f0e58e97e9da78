"""Launch a small hyper-parameter sweep: one single-device run per visible GPU."""
import argparse
import itertools
import os
import shlex
import subprocess
import sys

# Variables forwarded from the parent environment to every child run.
ENV_PASSTHROUGH = ["PATH", "HF_HOME", "WANDB_API_KEY", "CUDA_VISIBLE_DEVICES"]  # expect: environment

ACCELERATE_FLAGS = [
    "--num_processes", "1",
    "--mixed_precision", "fp16",  # expect: precision
    "--dynamo_backend", "inductor",  # expect: compilation
]


def build_command(gpu: int, lr: float, wd: float, out: str, dist_backend: str) -> str:
    return (
        f"CUDA_VISIBLE_DEVICES={gpu} accelerate launch {' '.join(ACCELERATE_FLAGS)} "  # expect: environment
        f"train.py --learning_rate {lr} --weight_decay {wd} --ddp_backend {dist_backend} "
        f"--output_dir {shlex.quote(out)}"
    )


def child_env(gpu: int) -> dict:
    env = {k: os.environ[k] for k in ENV_PASSTHROUGH if k in os.environ}
    env["CUDA_VISIBLE_DEVICES"] = str(gpu)  # expect: environment
    env["NCCL_P2P_DISABLE"] = "1"  # expect: distributed
    return env


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--gpus", type=int, default=int(os.environ.get("NUM_GPUS", "8")))
    p.add_argument("--dist-backend", default=os.getenv("DIST_BACKEND", "nccl"))  # expect: distributed
    p.add_argument("--dry-run", action="store_true")
    args = p.parse_args(argv)

    grid = list(itertools.product([1e-5, 3e-5, 1e-4], [0.0, 0.1]))
    procs = []
    for i, (lr, wd) in enumerate(grid):
        gpu = i % args.gpus
        cmd = build_command(gpu, lr, wd, f"runs/lr{lr}_wd{wd}", args.dist_backend)
        print(f"[launch] {cmd}")  # ok
        if args.dry_run:
            continue
        procs.append(subprocess.Popen(cmd, shell=True, env=child_env(gpu)))
    failures = sum(p.wait() != 0 for p in procs)
    print(f"{len(procs) - failures}/{len(procs)} runs succeeded")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
