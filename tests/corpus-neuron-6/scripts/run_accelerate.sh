#!/usr/bin/env bash
set -euo pipefail

MODEL=${MODEL:-meta-llama/Llama-3.2-1B}
OUT=${OUT:-outputs/llama-1b-ft}

export NCCL_DEBUG=WARN  # expect: distributed
export TOKENIZERS_PARALLELISM=false

accelerate launch \
  --num_processes 8 \
  --num_machines 1 \
  --mixed_precision fp16 \
  --dynamo_backend inductor \
  train.py \
    --model_name_or_path "$MODEL" \
    --output_dir "$OUT" \
    --per_device_train_batch_size 4  # expect: precision, compilation

# quick sanity eval in fp32
accelerate launch --num_processes 1 --mixed_precision no eval.py --ckpt "$OUT"  # ok
