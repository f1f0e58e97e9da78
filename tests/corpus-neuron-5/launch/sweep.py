"""Launch a small hyper-parameter sweep, one run per GPU."""
import itertools
import os
import shlex
import subprocess
from concurrent.futures import ThreadPoolExecutor

os.environ.setdefault("CUDA_VISIBLE_DEVICES", "0,1,2,3")  # expect: environment
os.environ.setdefault("NCCL_P2P_LEVEL", "NVL")  # expect: distributed

GPUS = os.environ["CUDA_VISIBLE_DEVICES"].split(",")  # expect: environment
LRS = [1e-4, 3e-4, 1e-3]
WARMUPS = [500, 2000]


def build_command(gpu: str, lr: float, warmup: int, precision: str = "fp16") -> str:  # may: precision
    return (
        f"CUDA_VISIBLE_DEVICES={gpu} python train.py "  # expect: environment
        f"--lr {lr} --warmup_steps {warmup} --mixed_precision {precision} "  # expect: precision
        f"--output_dir runs/lr{lr}_wu{warmup}"
    )


def run(job):
    gpu, lr, warmup = job
    env = dict(os.environ, CUDA_VISIBLE_DEVICES=gpu)  # expect: environment
    argv = shlex.split(build_command(gpu, lr, warmup))[1:]
    return subprocess.run(argv, env=env, check=False).returncode


def main():
    jobs = [(GPUS[i % len(GPUS)], lr, wu) for i, (lr, wu) in enumerate(itertools.product(LRS, WARMUPS))]
    with ThreadPoolExecutor(max_workers=len(GPUS)) as pool:
        codes = list(pool.map(run, jobs))
    print("exit codes:", codes)


if __name__ == "__main__":
    main()
