#!/usr/bin/env bash
# Source this before building the CUDA extensions or launching jobs:
#   source scripts/setup_env.sh
export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda-12.1}  # may: environment, dependencies
export PATH="$CUDA_HOME/bin:$PATH"  # may: environment
export LD_LIBRARY_PATH="$CUDA_HOME/lib64:${LD_LIBRARY_PATH:-}"  # may: environment, dependencies
export TORCH_CUDA_ARCH_LIST="8.0;8.6;8.9;9.0+PTX"  # may: environment, dependencies
export NVIDIA_VISIBLE_DEVICES=all  # may: environment
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3}  # expect: environment
export CUDA_DEVICE_ORDER=PCI_BUS_ID  # may: environment
export NCCL_DEBUG=WARN  # expect: distributed
export HF_HOME=${HF_HOME:-$HOME/.cache/huggingface}

if ! python -c "import flash_attn" 2>/dev/null; then
    MAX_JOBS=8 pip install flash-attn==2.5.8 --no-build-isolation  # expect: dependencies
fi
