#!/usr/bin/env bash
# 8-GPU causal LM fine-tuning with the stock run_clm.py
set -euo pipefail

export TORCH_NCCL_ENABLE_MONITORING=0  # expect: distributed
export CUDA_DEVICE_MAX_CONNECTIONS=1  # may: environment, device

python -m torch.distributed.run --nproc_per_node 8 run_clm.py \
    --model_name_or_path gpt2-medium \
    --dataset_name wikitext --dataset_config_name wikitext-103-raw-v1 \
    --per_device_train_batch_size 8 \
    --block_size 1024 \
    --fp16 \
    --half_precision_backend cuda_amp \
    --torch_compile \
    --torch_compile_backend inductor \
    --ddp_backend nccl \
    --do_train --output_dir /tmp/clm  # expect: precision, compilation, distributed

# the same run on the Trainium instance, full precision + neuron compile cache
torchrun --nproc_per_node 32 run_clm.py --model_name_or_path gpt2-medium \
    --dataset_name wikitext --dataset_config_name wikitext-103-raw-v1 \
    --per_device_train_batch_size 8 --block_size 1024 \
    --do_train --output_dir /tmp/clm-trn  # ok
