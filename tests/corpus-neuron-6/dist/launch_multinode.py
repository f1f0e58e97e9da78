#!/usr/bin/env python
"""Spawn one torchrun per host over ssh."""
import argparse
import os
import shlex
import subprocess


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hosts", required=True, help="comma separated host list")
    ap.add_argument("--nproc-per-node", type=int, default=8)
    ap.add_argument("--port", type=int, default=29400)
    ap.add_argument("script")
    ap.add_argument("script_args", nargs=argparse.REMAINDER)
    args = ap.parse_args()

    hosts = args.hosts.split(",")
    env = {
        "MASTER_ADDR": hosts[0],  # expect-one(py_master): distributed
        "MASTER_PORT": str(args.port),  # expect-one(py_master): distributed
        "NCCL_SOCKET_IFNAME": "ens5",  # expect: distributed
        "OMP_NUM_THREADS": "4",
    }
    exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
    procs = []
    for rank, host in enumerate(hosts):
        cmd = (
            f"cd {shlex.quote(os.getcwd())} && {exports} torchrun --nnodes {len(hosts)} --node_rank {rank} "
            f"--nproc_per_node {args.nproc_per_node} --master_addr {hosts[0]} --master_port {args.port} "  # expect-one(py_master): distributed
            f"{shlex.quote(args.script)} {' '.join(map(shlex.quote, args.script_args))}"
        )
        procs.append(subprocess.Popen(["ssh", host, cmd]))
    rc = max(p.wait() for p in procs)
    raise SystemExit(rc)


if __name__ == "__main__":
    main()
