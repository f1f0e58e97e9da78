#!/usr/bin/env bash
# Launch script as found in many GPU repositories.
set -euo pipefail
nvidia-smi --query-gpu=name,memory.total --format=csv
export CUDA_VISIBLE_DEVICES=0,1
torchrun --nproc_per_node=2 ddp_nccl.py --steps 20
