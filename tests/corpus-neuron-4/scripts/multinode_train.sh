#!/usr/bin/env bash
# Multi-node DDP launch under Slurm.
#   sbatch --nodes=4 scripts/multinode_train.sh
#SBATCH --job-name=ddp-pretrain
#SBATCH --ntasks-per-node=1
#SBATCH --exclusive
set -euo pipefail

export MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)  # expect-one(mn-launch): distributed
export MASTER_PORT=29500  # expect-one(mn-launch): distributed
export NCCL_SOCKET_IFNAME=ens5  # expect: distributed
export NCCL_IB_DISABLE=1  # expect: distributed
export TORCH_NCCL_BLOCKING_WAIT=1  # expect: distributed
export OMP_NUM_THREADS=8

echo "master: ${MASTER_ADDR}:${MASTER_PORT}, nodes: ${SLURM_NNODES}"

srun torchrun \
  --nnodes "$SLURM_NNODES" \
  --nproc_per_node 8 \
  --rdzv_id "$SLURM_JOB_ID" \
  --rdzv_backend c10d \
  --rdzv_endpoint "${MASTER_ADDR}:${MASTER_PORT}" \
  train/ddp_launch.py --epochs 10  # expect-one(mn-launch): distributed
