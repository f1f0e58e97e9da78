#!/usr/bin/env python
"""Launch a small learning-rate sweep, one accelerate job per device group."""
import itertools
import os
import shlex
import subprocess
import sys
from pathlib import Path

LRS = [1e-5, 3e-5, 1e-4]
PRECISION = "bf16"  # expect-any(sweep_fstr): precision
DEVICE_GROUPS = ["0,1", "2,3", "4,5", "6,7"]


def build_cmd(lr: float, out_dir: Path) -> list:
    return [
        "accelerate",
        "launch",
        "--num_processes",
        "2",
        "--mixed_precision",
        "fp16",  # expect: precision
        "train.py",
        "--learning_rate",
        str(lr),
        "--output_dir",
        str(out_dir),
    ]


def launch_all(root: Path) -> None:
    procs = []
    for (lr, group) in zip(LRS, itertools.cycle(DEVICE_GROUPS)):
        out_dir = root / f"lr{lr:g}"
        env = dict(os.environ)
        env["CUDA_VISIBLE_DEVICES"] = group  # expect: environment
        env["TOKENIZERS_PARALLELISM"] = "false"
        procs.append(subprocess.Popen(build_cmd(lr, out_dir), env=env))
    for p in procs:
        p.wait()


def launch_shell(root: Path, lr: float, group: str) -> int:
    cmd = (
        f"CUDA_VISIBLE_DEVICES={group} accelerate launch "  # expect: environment
        f"--mixed_precision {PRECISION} --num_processes 2 "  # expect-any(sweep_fstr): precision
        f"train.py --learning_rate {lr} --output_dir {shlex.quote(str(root))}"
    )
    return subprocess.call(cmd, shell=True)


def launch_eval(ckpt: Path) -> int:
    # evaluation is cheap, run it in full precision on one worker
    return subprocess.call(
        [sys.executable, "-m", "accelerate.commands.launch", "--mixed_precision", "no", "eval.py", str(ckpt)]  # ok
    )


if __name__ == "__main__":
    launch_all(Path(sys.argv[1] if len(sys.argv) > 1 else "sweeps"))
