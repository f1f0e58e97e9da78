#!/bin/bash
# Usage: bash scripts/finetune_torchrun.sh <num_gpus> <config>
NUM_GPUS=${1:-8}
CONFIG=${2:-configs/hf/trainer_fp16.yaml}

export TORCH_NCCL_BLOCKING_WAIT=1  # expect: distributed
export TORCH_CUDA_ARCH_LIST="8.0;8.6;9.0"  # may: environment, dependencies

torchrun --standalone --nproc_per_node="$NUM_GPUS" \
    run_clm.py "$CONFIG" \
    --bf16 \
    --torch_compile_backend inductor \
    --ddp_backend nccl  # expect: precision, compilation, distributed

# one process per visible GPU, whatever the node has
torchrun --standalone --nproc_per_node=gpu run_clm.py "$CONFIG" --max_steps 100  # may: device

# single-GPU smoke test
CUDA_VISIBLE_DEVICES=0 python run_clm.py "$CONFIG" --max_steps 10 --fp16  # expect: environment, precision

# old-style launcher kept for the benchmark table
python -m torch.distributed.launch --nproc_per_node=8 --use_env \
    train_imagenet.py /data/imagenet --dist-backend nccl --half_precision_backend apex  # expect: distributed, precision
