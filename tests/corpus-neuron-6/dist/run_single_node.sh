#!/usr/bin/env bash
# Single-node run of the torchvision reference recipe.
export MASTER_ADDR=127.0.0.1  # ok
export MASTER_PORT=29501  # ok
export CUDA_VISIBLE_DEVICES=0,1,2,3  # expect: environment

torchrun --standalone --nproc_per_node=4 ddp_train.py \
  --model resnet50 --batch-size 128 --lr 0.5 \
  --dist-backend nccl --amp  # expect: distributed; may: precision

python ddp_train.py --device cpu --dist-backend gloo --epochs 1  # ok
