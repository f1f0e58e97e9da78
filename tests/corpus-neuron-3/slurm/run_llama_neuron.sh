#!/bin/bash
#SBATCH --nodes=4
#SBATCH --exclusive
#SBATCH --output=slurm-%x-%j.out

# Llama pretraining with NeuronX Distributed on trn1 (modelled on the aws-neuron samples).
set -o pipefail
ulimit -n 65535

sudo sysctl -w net.ipv4.ip_local_reserved_ports=41000

export FI_EFA_USE_DEVICE_RDMA=1
export FI_PROVIDER=efa
export FI_EFA_FORK_SAFE=1
export CCOM_SOCKET_IFNAME=eth0
export MALLOC_ARENA_MAX=64
export XLA_USE_BF16=1  # expect: precision
export NEURON_CC_FLAGS="--model-type transformer --distribution-strategy=llm-training --cache_dir=$HOME/neuron_compile_cache/"  # ok
export NEURON_FUSE_SOFTMAX=1
export NEURON_RT_ASYNC_EXEC_MAX_INFLIGHT_REQUESTS=3
export NEURON_RT_NUM_CORES=32
export NUM_NEURONCORES=$NEURON_RT_NUM_CORES

NODES=($(scontrol show hostnames "$SLURM_JOB_NODELIST"))
export MASTER_ADDR=${NODES[0]}  # ok
export MASTER_PORT=2022  # ok
export NEURON_RT_ROOT_COMM_ID=$MASTER_ADDR:46820

DISTRIBUTED_ARGS="--nproc_per_node $NEURON_RT_NUM_CORES --nnodes $SLURM_NNODES --node_rank $SLURM_NODEID --master_addr $MASTER_ADDR --master_port $MASTER_PORT"  # ok

MODEL_PATH=${MODEL_PATH:-./configs/7B_config_llama2}
DATA_PATH=${DATA_PATH:-$HOME/examples_datasets/wikicorpus_llama2_7B_tokenized_4k}
LOG_PATH=logs/$SLURM_JOB_ID/log
mkdir -p "$(dirname "$LOG_PATH")"

torchrun $DISTRIBUTED_ARGS run_llama_nxd.py \
    --model_path "$MODEL_PATH" \
    --data_dir "$DATA_PATH" \
    --tensor_parallel_size 8 \
    --batch_size 1 \
    --grad_accum_usteps 32 \
    --max_steps 10000 \
    --seq_len 4096 \
    --lr 3e-4 \
    --use_zero_1 \
    --use_mix_precision \
    --tb_dir "logs/$SLURM_JOB_ID/tb" |& tee "$LOG_PATH"  # may: precision
