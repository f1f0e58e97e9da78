#!/usr/bin/env bash
# Environment for Trainium runs; sourced by scripts/run_trn1.sh before torchrun.
export XLA_USE_BF16=1  # expect: precision
export XLA_DOWNCAST_BF16=1  # expect: precision
export NEURON_CC_FLAGS="--model-type transformer --auto-cast all --auto-cast-type bf16"  # expect: precision
export NEURON_COMPILE_CACHE_URL="${HOME}/neuron_cache"
export MALLOC_ARENA_MAX=64
export OMP_NUM_THREADS=4
