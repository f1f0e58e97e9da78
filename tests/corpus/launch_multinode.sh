#!/usr/bin/env bash
# Multi-node launch script for SLURM or bare metal.
# Usage: bash scripts/launch_multinode.sh <config.yaml> [extra train.py args]
set -euo pipefail

CONFIG=${1:-configs/default.yaml}  # ok
shift || true

# ---- environment setup -------------------------------------------------
if [ "${USE_CONDA:-0}" = "1" ] && command -v conda >/dev/null 2>&1; then
    conda install -y pytorch=2.3.1 pytorch-cuda=12.1 -c pytorch -c nvidia  # expect: dependencies
elif [ "${LEGACY_ENV:-0}" = "1" ]; then
    conda install -y pytorch=1.13.1 cudatoolkit=11.7 -c pytorch  # expect: dependencies
elif [ ! -d .venv ]; then
    python -m venv .venv
    source .venv/bin/activate
    pip install --upgrade pip  # ok
    pip install torch==2.3.1 torchvision --index-url https://download.pytorch.org/whl/cu121  # expect: dependencies
    pip install nvidia-nccl-cu12==2.20.5  # expect: dependencies
    pip install -r requirements.txt  # ok
else
    source .venv/bin/activate
fi

# Image used by the containerised smoke test at the end of this script.
CONTAINER_IMAGE=nvidia/cuda:12.1.0-cudnn8-devel-ubuntu22.04  # expect: dependencies

# ---- GPU discovery -----------------------------------------------------
export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}  # expect: environment
NUM_GPUS=$(nvidia-smi --list-gpus | wc -l)  # expect: environment
if [ -z "${CUDA_VISIBLE_DEVICES:-}" ]; then  # expect: environment
    export CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((NUM_GPUS - 1)))  # expect: environment
fi
echo "Using ${NUM_GPUS} cuda devices on $(hostname)"  # ok
nvidia-smi --query-gpu=index,name,memory.total --format=csv  # expect: environment

# ---- NCCL / networking -------------------------------------------------
export NCCL_DEBUG=${NCCL_DEBUG:-WARN}  # expect: distributed
export NCCL_IB_DISABLE=0  # expect: distributed
export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-eth0}  # expect: distributed
export OMP_NUM_THREADS=8  # ok
export TOKENIZERS_PARALLELISM=false  # ok
export PYTHONUNBUFFERED=1  # ok

MASTER_ADDR=${MASTER_ADDR:-$(hostname -I | awk '{print $1}')}  # expect: distributed
MASTER_PORT=${MASTER_PORT:-29500}  # ok
NNODES=${SLURM_NNODES:-1}  # ok
NODE_RANK=${SLURM_NODEID:-0}  # ok

LOG_DIR=logs/$(date +%Y%m%d_%H%M%S)  # ok
mkdir -p "$LOG_DIR"
cp "$CONFIG" "$LOG_DIR/"

echo "[launch] node ${NODE_RANK}/${NNODES} master=${MASTER_ADDR}:${MASTER_PORT}"  # ok

torchrun \
    --nnodes="$NNODES" \
    --node_rank="$NODE_RANK" \
    --nproc_per_node="$NUM_GPUS" \
    --master_addr="$MASTER_ADDR" \
    --master_port="$MASTER_PORT" \
    train.py --config "$CONFIG" --output_dir "$LOG_DIR" "$@" 2>&1 | tee "$LOG_DIR/train.log"

status=${PIPESTATUS[0]}
if [ "$status" -ne 0 ]; then
    echo "training failed with status $status" >&2
    exit "$status"
fi

# ---- post-run summary --------------------------------------------------
nvidia-smi --query-compute-apps=pid,used_memory --format=csv > "$LOG_DIR/gpu_apps.csv" || true  # expect: environment

if command -v docker >/dev/null 2>&1 && [ "${SMOKE_TEST:-0}" = "1" ]; then
    docker run --rm --gpus all -v "$PWD:/workspace" "$CONTAINER_IMAGE" \
        python /workspace/scripts/smoke_test.py --ckpt "/workspace/$LOG_DIR/last.pt"
fi

echo "done; logs in $LOG_DIR"  # ok
