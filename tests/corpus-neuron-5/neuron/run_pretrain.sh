# target: neuron
# Launch Llama-2-7B pre-training on trn1.32xlarge nodes under Slurm:
#   sbatch --nodes=4 --exclusive neuron/run_pretrain.sh
set -eo pipefail

export FI_PROVIDER=efa
export FI_EFA_USE_DEVICE_RDMA=1
export FI_EFA_FORK_SAFE=1
export MALLOC_ARENA_MAX=64
export XLA_DOWNCAST_BF16=1  # expect: precision
export NEURON_CC_FLAGS="--model-type transformer --distribution-strategy=llm-training --cache_dir=$HOME/neuron_cache"  # ok
export NEURON_FUSE_SOFTMAX=1
export NEURON_RT_ASYNC_EXEC_MAX_INFLIGHT_REQUESTS=3

nodes=( $(scontrol show hostnames "$SLURM_JOB_NODELIST") )
export MASTER_ADDR=${nodes[0]}  # ok
export MASTER_PORT=41000  # ok
export NEURON_RT_ROOT_COMM_ID="${MASTER_ADDR}:46820"

torchrun --nproc_per_node=32 --nnodes="$SLURM_NNODES" --node_rank="$SLURM_NODEID" \
    --master_addr="$MASTER_ADDR" --master_port="$MASTER_PORT" \
    run_llama_nxd.py --use_zero1_optimizer 1 --tensor_parallel_size 8 --bf16  # expect: precision

# compile-only pass used to warm the cache
NEURON_EXTRACT_GRAPHS_ONLY=1 neuron_parallel_compile torchrun --nproc_per_node=32 run_llama_nxd.py --steps 10  # ok
