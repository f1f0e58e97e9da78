#!/usr/bin/env bash
# Launch on 8 GPUs; see nvidia-smi for the layout
nvidia-smi topo -m  # expect: environment
export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7  # expect: environment
export NCCL_IB_DISABLE=1  # expect: distributed
export CUDA_HOME=/usr/local/cuda  # expect: environment
echo "starting"  # ok
torchrun --nproc_per_node=8 train.py  # ok
