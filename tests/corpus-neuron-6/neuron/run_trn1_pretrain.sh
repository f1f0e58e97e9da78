#!/bin/bash
# Pre-compile then train on a single trn1.32xlarge.
set -ex

export XLA_USE_BF16=1  # expect: precision
export NEURON_CC_FLAGS="--model-type transformer --auto-cast all --auto-cast-type bf16 --cache_dir=./neuron_cache"  # expect: precision
export NEURON_RT_VISIBLE_CORES=0-31  # ok
export NEURON_RT_ASYNC_EXEC_MAX_INFLIGHT_REQUESTS=3
export MALLOC_ARENA_MAX=64

PROCS=32
STEPS=${STEPS:-10000}

if [ "${COMPILE:-0}" = "1" ]; then
  neuron_parallel_compile torchrun --nproc_per_node=$PROCS train_llama_xla.py \
    --max_steps 10 --seq_len 2048  # ok
fi

torchrun --nproc_per_node=$PROCS train_llama_xla.py \
  --max_steps $STEPS --seq_len 2048 \
  --bf16  # expect: precision

neuron-top -n 1 || true
