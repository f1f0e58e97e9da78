#!/bin/bash
#SBATCH --job-name=pretrain-1b
#SBATCH --nodes=4
#SBATCH --ntasks-per-node=1
#SBATCH --cpus-per-task=96
#SBATCH --exclusive
#SBATCH --output=logs/%x-%j.out

# Multi-node pretraining launcher (Megatron/torchtitan-style srun + torchrun).
set -x
source /fsx/envs/train/bin/activate

GPUS_PER_NODE=8
NNODES=$SLURM_NNODES

export MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)  # expect-one(mn-slurm): distributed
export MASTER_PORT=${MASTER_PORT:-6000}  # expect-one(mn-slurm): distributed

export NCCL_DEBUG=INFO  # expect: distributed
export NCCL_SOCKET_IFNAME=^docker,lo  # expect: distributed
export NCCL_IB_TIMEOUT=22  # expect: distributed
export NCCL_NVLS_ENABLE=0  # expect: distributed
export CUDA_DEVICE_MAX_CONNECTIONS=1  # may: environment, runtime, device

LAUNCHER=(
  torchrun
  --nnodes "$NNODES"
  --nproc_per_node "$GPUS_PER_NODE"
  --rdzv_id "$SLURM_JOB_ID"
  --rdzv_backend c10d  # ok
  --rdzv_endpoint "$MASTER_ADDR:$MASTER_PORT"  # expect-one(mn-slurm): distributed
)

TRAIN_ARGS=(
  --config configs/pretrain_1b.yaml
  --dist-backend nccl  # expect: distributed
  --precision bf16-mixed  # expect: precision
  --dynamo_backend inductor  # expect: compilation
  --global-batch-size 1024
  --seed 1234
)

mkdir -p logs
srun --kill-on-bad-exit=1 "${LAUNCHER[@]}" pretrain.py "${TRAIN_ARGS[@]}"  # expect-one(mn-slurm): distributed
