"""Sweep launcher: builds an `accelerate launch` command for one trial and runs it."""  # ok
import argparse
import os
import shlex
import subprocess
import sys

DEFAULT_BACKEND = os.environ.get("DIST_BACKEND", "nccl")  # expect: distributed
FORWARDED_ENV = ("CUDA_VISIBLE_DEVICES", "NCCL_DEBUG", "WANDB_API_KEY", "HF_HOME")  # expect: environment; may: distributed
LAUNCH_DEFAULTS = shlex.split(os.environ.get("LAUNCH_DEFAULTS", "--mixed_precision fp16 --num_machines 1"))  # expect: precision


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("script")
    p.add_argument("--gpus", default="0", help="comma-separated CUDA device ids for this trial")  # ok
    p.add_argument("--nnodes", type=int, default=1)
    p.add_argument("--backend", default=DEFAULT_BACKEND, choices=["nccl", "gloo", "mpi"])  # may: distributed
    p.add_argument("--precision", default=os.environ.get("MIXED_PRECISION"), choices=["no", "fp16", "bf16"])  # may: precision
    p.add_argument("--compile", action="store_true", help="forward --dynamo_backend inductor to accelerate")  # ok
    p.add_argument("--dry-run", action="store_true")
    return p.parse_known_args(argv)


def build_command(args, extra):
    world = len(args.gpus.split(","))
    if args.nnodes > 1 or world > 1:
        cmd = ["accelerate", "launch", "--multi_gpu", f"--num_processes={world * args.nnodes}"]  # may: device
    else:
        cmd = ["accelerate", "launch", "--num_processes=1"]
    if args.precision:
        cmd += ["--mixed_precision", args.precision]  # may: precision
    else:
        cmd += LAUNCH_DEFAULTS
    if args.compile:
        cmd += ["--dynamo_backend", "inductor"]  # expect: compilation
    cmd.append(args.script)
    cmd += ["--dist-backend", args.backend]  # may: distributed
    cmd += extra
    return cmd


def child_env(args):
    env = {k: os.environ[k] for k in FORWARDED_ENV if k in os.environ}
    env["PATH"] = os.environ["PATH"]
    env["CUDA_VISIBLE_DEVICES"] = args.gpus  # expect: environment
    env["TORCH_NCCL_ASYNC_ERROR_HANDLING"] = "1"  # expect: distributed
    env.setdefault("NCCL_DEBUG", "WARN")  # expect: distributed
    return env


def run_eval(args, ckpt):
    # Evaluation runs on a single device, outside accelerate.
    first = args.gpus.split(",")[0]
    line = f"CUDA_VISIBLE_DEVICES={first} {sys.executable} eval.py --ckpt {ckpt} --fp16"  # expect: environment, precision
    return subprocess.run(line, shell=True, check=True)


def smoke_test():
    """Two-process sanity check before a long sweep."""
    return subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2",
         "tools/smoke.py", "--bf16"],  # expect: precision
        check=True,
    )


def main():
    args, extra = parse_args()
    cmd = build_command(args, extra)
    print("launching:", shlex.join(cmd))
    if args.dry_run:
        return 0
    smoke_test()
    rc = subprocess.run(cmd, env=child_env(args)).returncode
    if rc == 0:
        run_eval(args, os.path.join("outputs", os.path.basename(args.script), "last"))
    return rc


if __name__ == "__main__":
    sys.exit(main())
