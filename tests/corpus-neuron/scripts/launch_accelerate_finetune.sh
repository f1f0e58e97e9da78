#!/usr/bin/env bash
# Fine-tune Llama-2-7B with LoRA on one 8xA100 node through accelerate.
# Usage: MODEL=meta-llama/Llama-2-7b-hf bash scripts/launch_accelerate_finetune.sh
set -euo pipefail

export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}  # expect: environment
export TOKENIZERS_PARALLELISM=false
export WANDB_PROJECT=llama2-lora
export NCCL_DEBUG=WARN  # expect: distributed
export TORCH_NCCL_ASYNC_ERROR_HANDLING=1  # expect: distributed
export HF_HUB_ENABLE_HF_TRANSFER=1

MODEL=${MODEL:-meta-llama/Llama-2-7b-hf}
OUT_DIR=${OUT_DIR:-./outputs/llama2-lora-$(date +%Y%m%d-%H%M)}
NUM_GPUS=$(nvidia-smi --list-gpus | wc -l)  # may: device, environment
mkdir -p "${OUT_DIR}"

LAUNCH_ARGS=(
  --config_file configs/accelerate_default_config.yaml
  --num_processes "${NUM_GPUS}"
  --num_machines 1
  --mixed_precision fp16  # expect: precision
  --dynamo_backend inductor  # expect: compilation
)

TRAIN_ARGS=(
  --model_name_or_path "${MODEL}"
  --output_dir "${OUT_DIR}"
  --per_device_train_batch_size 4
  --gradient_accumulation_steps 8
  --learning_rate 2e-4
  --num_train_epochs 3
  --logging_steps 10
  --save_strategy epoch
  --report_to wandb
)

accelerate launch "${LAUNCH_ARGS[@]}" train_hf_trainer.py "${TRAIN_ARGS[@]}" 2>&1 | tee "${OUT_DIR}/train.log"
