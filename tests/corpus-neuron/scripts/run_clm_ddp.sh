#!/bin/bash
# Continued pre-training of GPT-2 large on wikitext-103 with the stock Hugging Face example script,
# plus the torchvision ResNet-50 reference recipe on the same allocation.
set -e

NPROC=${NPROC:-8}
OUT=/scratch/${USER}/gpt2-wikitext

torchrun --nproc_per_node=${NPROC} --master_port=29501 \
    examples/pytorch/language-modeling/run_clm.py \
    --model_name_or_path gpt2-large \
    --dataset_name wikitext \
    --dataset_config_name wikitext-103-raw-v1 \
    --per_device_train_batch_size 8 \
    --block_size 1024 \
    --do_train --do_eval \
    --fp16 \
    --half_precision_backend amp \
    --torch_compile --torch_compile_backend inductor \
    --ddp_backend nccl \
    --output_dir "${OUT}"  # expect: precision, compilation, distributed

# bf16 run for the A100 partition
if [[ "${PARTITION:-}" == "a100" ]]; then
  python examples/pytorch/language-modeling/run_clm.py --model_name_or_path gpt2-large --dataset_name wikitext --dataset_config_name wikitext-103-raw-v1 --do_train --bf16 --output_dir "${OUT}-bf16"  # expect: precision
fi

# ImageNet reference recipe (vision/references/classification)
torchrun --nproc_per_node=${NPROC} references/classification/train.py --model resnet50 --batch-size 128 --lr 0.5 --epochs 90 --dist-backend nccl --amp --data-path /datasets/imagenet  # expect: distributed; may: precision
