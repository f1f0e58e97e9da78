#!/bin/bash
#SBATCH --job-name=gpt3-1.3b
#SBATCH --nodes=4
#SBATCH --ntasks-per-node=1
#SBATCH --exclusive
#SBATCH --output=logs/%x_%j.out

# Megatron-LM GPT-3 1.3B pre-training across 4 nodes.

set -euo pipefail

export MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)  # expect-one(slurm-rdzv): distributed
export MASTER_PORT=29500  # expect-one(slurm-rdzv): distributed
export NCCL_SOCKET_IFNAME=ens  # expect: distributed
export NCCL_IB_DISABLE=0  # expect: distributed
export TORCH_NCCL_ASYNC_ERROR_HANDLING=1  # expect: distributed
export CUDA_DEVICE_MAX_CONNECTIONS=1  # may: environment
export XLA_USE_BF16=1  # expect: precision
export OMP_NUM_THREADS=8

GPUS_PER_NODE=8
DATA_PATH=/fsx/data/pile_text_document
CHECKPOINT_PATH=/fsx/checkpoints/gpt3-1.3b
TOKENIZER_DIR=/fsx/tokenizers/gpt2

echo "Rendezvous at ${MASTER_ADDR}:${MASTER_PORT} (NCCL over ${NCCL_SOCKET_IFNAME})"  # ok

GPT_ARGS=(
    --num-layers 24
    --hidden-size 2048
    --num-attention-heads 16
    --seq-length 2048
    --max-position-embeddings 2048
    --micro-batch-size 4
    --global-batch-size 512
    --lr 2.0e-4
    --min-lr 2.0e-5
    --train-iters 300000
    --lr-decay-style cosine
    --clip-grad 1.0
    --bf16  # expect: precision
    --use-flash-attn  # may: kernels
)

DATA_ARGS=(
    --data-path "$DATA_PATH"
    --vocab-file "$TOKENIZER_DIR/vocab.json"
    --merge-file "$TOKENIZER_DIR/merges.txt"
    --split 949,50,1
)

DIST_ARGS=(
    --tensor-model-parallel-size 2
    --pipeline-model-parallel-size 1
    --distributed-backend nccl  # expect: distributed
    --distributed-timeout-minutes 60
)

srun --kill-on-bad-exit=1 torchrun \
    --nproc_per_node "$GPUS_PER_NODE" \
    --nnodes "$SLURM_NNODES" \
    --rdzv_id "$SLURM_JOB_ID" \
    --rdzv_backend c10d \
    --rdzv_endpoint "$MASTER_ADDR:$MASTER_PORT" \
    pretrain_gpt.py \
    "${GPT_ARGS[@]}" \
    "${DATA_ARGS[@]}" \
    "${DIST_ARGS[@]}" \
    --save "$CHECKPOINT_PATH" \
    --load "$CHECKPOINT_PATH"  # expect-one(slurm-rdzv): distributed
