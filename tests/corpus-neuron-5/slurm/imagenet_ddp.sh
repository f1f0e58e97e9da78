#!/bin/bash
#SBATCH -J resnet50-ddp
#SBATCH -N 2
#SBATCH --ntasks-per-node=8
#SBATCH --gpus-per-node=8  # may: device
#SBATCH -t 48:00:00

nodes=( $(scontrol show hostnames "$SLURM_JOB_NODELIST") )
head_node=${nodes[0]}

export MASTER_ADDR=$head_node  # expect-one(slurm-resnet): distributed
export MASTER_PORT=$((20000 + SLURM_JOB_ID % 10000))  # expect-one(slurm-resnet): distributed
export NCCL_NSOCKS_PERTHREAD=4  # expect: distributed
export NCCL_SOCKET_NTHREADS=2  # expect: distributed

srun python train_imagenet.py /datasets/imagenet \
    --arch resnet50 --epochs 90 --batch-size 256 \
    --dist-url "tcp://${MASTER_ADDR}:${MASTER_PORT}" \
    --dist-backend nccl --amp  # expect: distributed; expect-one(slurm-resnet): distributed; may: precision
