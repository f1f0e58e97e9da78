#!/usr/bin/env bash
# Fine-tune on a single 8xA100 node with accelerate.
set -euo pipefail

export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}  # expect: environment
export NCCL_P2P_DISABLE=0  # expect: distributed
export OMP_NUM_THREADS=8

MODEL=${MODEL:-"meta-llama/Meta-Llama-3-8B"}
OUT=${OUT:-"runs/llama3-8b-sft"}
PRECISION=${PRECISION:-fp16}  # may: precision

accelerate launch \
  --config_file configs/accelerate/default_config.yaml \
  --multi_gpu \
  --num_processes 8 \
  --mixed_precision fp16 \
  --dynamo_backend inductor \
  train_hf.py --model_name_or_path "$MODEL" --output_dir "$OUT"  # expect: precision, compilation; may: distributed, device

# evaluation: one process, precision taken from the variable above
accelerate launch --num_processes 1 --mixed_precision "$PRECISION" eval.py --ckpt "$OUT"  # may: precision

# the plain CPU sanity run stays as it is
accelerate launch --cpu --num_processes 1 eval.py --ckpt "$OUT" --limit 16  # ok
