#!/usr/bin/env bash
# Fine-tune T5-large on XSum.
# Usage: ./run_seq2seq_deepspeed.sh [cuda|neuron]
set -e

ACCEL=${1:-cuda}  # may: device
OUTPUT_DIR=${OUTPUT_DIR:-./t5-large-xsum}
NUM_GPUS=${NUM_GPUS:-8}

TRAIN_ARGS=(
    --model_name_or_path google-t5/t5-large
    --dataset_name EdinburghNLP/xsum
    --source_prefix "summarize: "
    --do_train
    --do_eval
    --per_device_train_batch_size 8
    --learning_rate 1e-4
    --max_source_length 1024
    --max_target_length 128
    --pad_to_max_length False  # may: compilation
    --output_dir "$OUTPUT_DIR"
    --overwrite_output_dir
)

if [[ "$ACCEL" == "neuron" ]]; then
    export NEURON_CC_FLAGS="--model-type transformer --auto-cast all --auto-cast-type bf16"  # expect: precision
    export NEURON_RT_NUM_CORES=32
    LAUNCHER=(torchrun --nproc_per_node 32)
    TRAIN_ARGS+=(--bf16)  # expect: precision
else
    export NCCL_P2P_DISABLE=1  # expect: distributed
    LAUNCHER=(deepspeed --num_gpus "$NUM_GPUS")
    TRAIN_ARGS+=(
        --fp16  # expect: precision
        --half_precision_backend apex  # expect: precision; may: kernels
        --torch_compile_backend inductor  # expect: compilation
        --ddp_backend nccl  # expect: distributed
        --deepspeed ds_config_zero2.json
    )
fi

echo "Launching on ${ACCEL}: ${LAUNCHER[*]}"  # ok

"${LAUNCHER[@]}" examples/pytorch/summarization/run_summarization.py \
    "${TRAIN_ARGS[@]}"
