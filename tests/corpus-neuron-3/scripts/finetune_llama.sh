#!/usr/bin/env bash
# Full-parameter SFT on a single 8-accelerator node (FastChat / Alpaca style launcher).
set -euo pipefail

MODEL=${MODEL:-meta-llama/Llama-2-7b-hf}
DATA=${DATA:-data/alpaca_train.json}
OUT=${OUT:-checkpoints/llama2-7b-sft}
NGPUS=${NGPUS:-8}

export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}  # expect: environment
export TORCH_NCCL_ASYNC_ERROR_HANDLING=1  # expect: distributed
export NCCL_DEBUG=${NCCL_DEBUG:-WARN}  # expect: distributed
export OMP_NUM_THREADS=4
export WANDB_PROJECT=llama-sft

ARGS=(
  --model_name_or_path "$MODEL"
  --data_path "$DATA"
  --output_dir "$OUT"
  --num_train_epochs 3
  --per_device_train_batch_size 4
  --per_device_eval_batch_size 4
  --gradient_accumulation_steps 8
  --learning_rate 2e-5
  --weight_decay 0.0
  --warmup_ratio 0.03
  --lr_scheduler_type cosine
  --model_max_length 2048
  --bf16 True  # expect: precision
  --tf32 True  # may: precision
  --half_precision_backend auto  # expect: precision
  --fsdp "full_shard auto_wrap"
  --fsdp_transformer_layer_cls_to_wrap LlamaDecoderLayer
  --ddp_backend nccl  # expect: distributed
  --ddp_timeout 7200
  --gradient_checkpointing True
  --fp16_full_eval False  # ok
  --logging_steps 10
  --report_to wandb
)

if [[ "${USE_COMPILE:-0}" == "1" ]]; then
  ARGS+=(--torch_compile True)  # may: compilation
  ARGS+=(--torch_compile_backend inductor)  # expect: compilation
  ARGS+=(--torch_compile_mode max-autotune)  # may: compilation
fi

# Static padding keeps the evaluation shapes identical to training.
ARGS+=(--pad_to_max_length True)  # ok

echo "Launching with: ${ARGS[*]}"

if [[ -n "${DEEPSPEED_CONFIG:-}" ]]; then
  deepspeed --num_gpus "$NGPUS" --master_port 29600 train.py "${ARGS[@]}" --deepspeed "$DEEPSPEED_CONFIG"  # may: device
else
  torchrun --standalone --nproc_per_node="$NGPUS" train.py "${ARGS[@]}"
fi
