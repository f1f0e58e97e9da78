#!/bin/bash
export MODEL_NAME="stabilityai/stable-diffusion-2-1-base"
export INSTANCE_DIR="dog"
export OUTPUT_DIR="lora-trained-dog"

accelerate launch --mixed_precision="fp16" train_dreambooth_lora.py \
  --pretrained_model_name_or_path=$MODEL_NAME \
  --instance_data_dir=$INSTANCE_DIR \
  --output_dir=$OUTPUT_DIR \
  --instance_prompt="a photo of sks dog" \
  --resolution=512 \
  --train_batch_size=1 \
  --gradient_accumulation_steps=1 \
  --learning_rate=1e-4 \
  --max_train_steps=500 \
  --enable_xformers_memory_efficient_attention \
  --seed="0"  # expect: precision; may: kernels

accelerate launch train_text_to_image.py --mixed_precision=bf16 --use_ema --snr_gamma=5.0  # expect: precision
