#!/bin/bash
#SBATCH --job-name=bert-trn1
#SBATCH --nodes=4
#SBATCH --exclusive
#SBATCH --output=logs/%x-%j.out
# Multi-node launcher that already carries what the Neuron runtime and EFA need: nothing to report.
set -euo pipefail

nodes=( $(scontrol show hostnames "$SLURM_JOB_NODELIST") )
export MASTER_ADDR=${nodes[0]}  # ok
export MASTER_PORT=41000  # ok
export NEURON_RT_ROOT_COMM_ID="${MASTER_ADDR}:46820"  # ok
export FI_PROVIDER=efa  # ok
export FI_EFA_USE_DEVICE_RDMA=1  # ok
export FI_EFA_FORK_SAFE=1
export NEURON_FUSE_SOFTMAX=1
export NEURON_RT_STOCHASTIC_ROUNDING_EN=1
export NEURON_CC_FLAGS="--model-type transformer --cache_dir=/fsx/neuron_cache"  # ok
export MALLOC_ARENA_MAX=64

srun torchrun --nnodes "$SLURM_NNODES" --nproc_per_node 32 --rdzv_id "$SLURM_JOB_ID" --rdzv_backend c10d --rdzv_endpoint "$MASTER_ADDR:$MASTER_PORT" train_trn1_xla.py --batch-size 8 --steps 20000  # ok
