# target: xla
# Trn1 (torch-neuronx on PyTorch/XLA) BERT pretraining, adapted from the 2.x tutorial.
# Run with: bash scripts/trn1_legacy_bf16.sh
set -eo pipefail

export XLA_USE_BF16=1  # expect: precision
export XLA_DOWNCAST_BF16=1  # expect: precision
export NEURON_CC_FLAGS="--model-type transformer --auto-cast all --auto-cast-type bf16"  # expect: precision
export NEURON_RT_STOCHASTIC_ROUNDING_EN=1
export MALLOC_ARENA_MAX=64
export FI_EFA_USE_DEVICE_RDMA=1

STEPS=${STEPS:-10000}
# Populate the compile cache first (graphs only, no real steps), then train.
neuron_parallel_compile torchrun --nproc_per_node=32 train_trn1_xla.py --steps 10 --batch-size 16
torchrun --nproc_per_node=32 train_trn1_xla.py --steps "${STEPS}" --batch-size 16
