#!/bin/bash
#SBATCH --job-name=llama-pretrain
#SBATCH --nodes=4
#SBATCH --ntasks-per-node=1
#SBATCH --cpus-per-task=96
#SBATCH --output=logs/%x-%j.out
#SBATCH --exclusive
# Multi-node DDP: rendezvous on the first node, NCCL over the cluster fabric.
set -euo pipefail

nodes=( $(scontrol show hostnames "$SLURM_JOB_NODELIST") )
head_node=${nodes[0]}
head_node_ip=$(srun --nodes=1 --ntasks=1 -w "$head_node" hostname --ip-address)

export MASTER_ADDR=${head_node_ip}  # expect-one(slurm-rendezvous): distributed
export MASTER_PORT=29500  # expect-one(slurm-rendezvous): distributed
export NCCL_SOCKET_IFNAME=ens  # expect: distributed
export NCCL_IB_DISABLE=0  # expect: distributed
export NCCL_NET_GDR_LEVEL=PHB  # expect: distributed
export TORCH_NCCL_BLOCKING_WAIT=1  # expect: distributed
export OMP_NUM_THREADS=8
export LOGLEVEL=INFO

echo "rendezvous at ${MASTER_ADDR}:${MASTER_PORT} across ${SLURM_NNODES} nodes"

srun torchrun \
  --nnodes "$SLURM_NNODES" \
  --nproc_per_node 8 \
  --rdzv_id "$SLURM_JOB_ID" \
  --rdzv_backend c10d \
  --rdzv_endpoint "$MASTER_ADDR:$MASTER_PORT" \
  train_ddp_torchrun.py --epochs 10 --batch-size 32 --dist-backend nccl  # expect: distributed
