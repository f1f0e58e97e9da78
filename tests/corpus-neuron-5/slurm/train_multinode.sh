#!/bin/bash
#SBATCH --job-name=gpt-pretrain
#SBATCH --nodes=4
#SBATCH --ntasks-per-node=1
#SBATCH --gres=gpu:8  # may: device
#SBATCH --cpus-per-task=96
#SBATCH --exclusive
#SBATCH --output=logs/%x-%j.out

set -euo pipefail

module load cuda/12.1  # may: environment, dependencies

export NCCL_DEBUG=INFO  # expect: distributed
export NCCL_SOCKET_IFNAME=^docker0,lo  # expect: distributed
export NCCL_IB_HCA=mlx5  # expect: distributed
export NCCL_ASYNC_ERROR_HANDLING=1  # expect: distributed
export TORCH_NCCL_ASYNC_ERROR_HANDLING=1  # expect: distributed

export MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)  # expect-one(slurm-gpt): distributed
export MASTER_PORT=29500  # expect-one(slurm-gpt): distributed
export WORLD_SIZE=$((SLURM_NNODES * 8))

echo "master=${MASTER_ADDR}:${MASTER_PORT} world=${WORLD_SIZE}"

srun --kill-on-bad-exit=1 torchrun \
    --nnodes="$SLURM_NNODES" \
    --nproc_per_node=8 \
    --rdzv_id="$SLURM_JOB_ID" \
    --rdzv_backend=c10d \
    --rdzv_endpoint="$MASTER_ADDR:$MASTER_PORT" \
    pretrain.py --config configs/gpt_1b.yaml --bf16  # expect: precision; expect-one(slurm-gpt): distributed
