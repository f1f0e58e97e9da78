#!/usr/bin/env python
# coding=utf-8
# Adapted from huggingface/diffusers examples/dreambooth/train_dreambooth_lora.py
import argparse
import gc
import logging
import math
import os
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from accelerate import Accelerator
from accelerate.logging import get_logger
from accelerate.utils import ProjectConfiguration, set_seed
from diffusers import AutoencoderKL, DDPMScheduler, DiffusionPipeline, DPMSolverMultistepScheduler, UNet2DConditionModel
from diffusers.optimization import get_scheduler
from diffusers.training_utils import compute_snr
from diffusers.utils.import_utils import is_xformers_available  # may: kernels
from packaging import version
from peft import LoraConfig
from peft.utils import get_peft_model_state_dict
from PIL import Image
from torch.utils.data import Dataset
from torchvision import transforms
from transformers import AutoTokenizer, CLIPTextModel

logger = get_logger(__name__)


def parse_args(input_args=None):
    parser = argparse.ArgumentParser(description="Simple example of a training script.")
    parser.add_argument("--pretrained_model_name_or_path", type=str, required=True)
    parser.add_argument("--instance_data_dir", type=str, required=True)
    parser.add_argument("--instance_prompt", type=str, required=True)
    parser.add_argument("--validation_prompt", type=str, default=None)
    parser.add_argument("--num_validation_images", type=int, default=4)
    parser.add_argument("--output_dir", type=str, default="lora-dreambooth-model")
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--resolution", type=int, default=512)
    parser.add_argument("--train_batch_size", type=int, default=4)
    parser.add_argument("--max_train_steps", type=int, default=500)
    parser.add_argument("--gradient_accumulation_steps", type=int, default=1)
    parser.add_argument("--gradient_checkpointing", action="store_true")
    parser.add_argument("--learning_rate", type=float, default=5e-4)
    parser.add_argument("--lr_scheduler", type=str, default="constant")
    parser.add_argument("--snr_gamma", type=float, default=None)
    parser.add_argument("--use_8bit_adam", action="store_true")
    parser.add_argument(
        "--allow_tf32",
        action="store_true",
        help="Whether or not to allow TF32 on Ampere GPUs. Can be used to speed up training.",
    )
    parser.add_argument(
        "--mixed_precision",
        type=str,
        default=None,  # ok
        choices=["no", "fp16", "bf16"],
        help="Whether to use mixed precision. Defaults to the value in the accelerate config.",
    )
    parser.add_argument("--enable_xformers_memory_efficient_attention", action="store_true")  # may: kernels
    parser.add_argument("--rank", type=int, default=4)
    return parser.parse_args(input_args)


class DreamBoothDataset(Dataset):
    def __init__(self, instance_data_root, instance_prompt, tokenizer, size=512):
        self.instance_images_path = list(Path(instance_data_root).iterdir())
        self.instance_prompt = instance_prompt
        self.tokenizer = tokenizer
        self.image_transforms = transforms.Compose(
            [
                transforms.Resize(size, interpolation=transforms.InterpolationMode.BILINEAR),  # ok
                transforms.CenterCrop(size),
                transforms.ToTensor(),
                transforms.Normalize([0.5], [0.5]),
            ]
        )

    def __len__(self):
        return len(self.instance_images_path)

    def __getitem__(self, index):
        image = Image.open(self.instance_images_path[index % len(self.instance_images_path)]).convert("RGB")
        ids = self.tokenizer(
            self.instance_prompt,
            truncation=True,
            padding="max_length",  # ok
            max_length=self.tokenizer.model_max_length,
            return_tensors="pt",
        ).input_ids
        return {"instance_images": self.image_transforms(image), "instance_prompt_ids": ids}


def collate_fn(examples):
    input_ids = torch.cat([example["instance_prompt_ids"] for example in examples], dim=0)
    pixel_values = torch.stack([example["instance_images"] for example in examples])
    pixel_values = pixel_values.to(memory_format=torch.contiguous_format).float()
    return {"input_ids": input_ids, "pixel_values": pixel_values}


def log_validation(pipeline, args, accelerator, epoch):
    logger.info(f"Running validation... Generating {args.num_validation_images} images")
    scheduler_args = {}
    pipeline.scheduler = DPMSolverMultistepScheduler.from_config(pipeline.scheduler.config, **scheduler_args)
    pipeline = pipeline.to(accelerator.device)
    pipeline.set_progress_bar_config(disable=True)

    generator = torch.Generator(device="cuda").manual_seed(args.seed) if args.seed else None  # expect: device
    with torch.autocast("cuda"):  # expect: device; may: precision
        images = [
            pipeline(args.validation_prompt, num_inference_steps=25, generator=generator).images[0]
            for _ in range(args.num_validation_images)
        ]

    for tracker in accelerator.trackers:
        if tracker.name == "tensorboard":
            np_images = np.stack([np.asarray(img) for img in images])
            tracker.writer.add_images("validation", np_images, epoch, dataformats="NHWC")

    del pipeline
    torch.cuda.empty_cache()  # expect: device|runtime
    return images


def main(args):
    logging_dir = Path(args.output_dir, "logs")
    accelerator = Accelerator(
        gradient_accumulation_steps=args.gradient_accumulation_steps,
        mixed_precision=args.mixed_precision,  # ok
        log_with="tensorboard",
        project_config=ProjectConfiguration(project_dir=args.output_dir, logging_dir=logging_dir),
    )
    if args.seed is not None:
        set_seed(args.seed)

    tokenizer = AutoTokenizer.from_pretrained(args.pretrained_model_name_or_path, subfolder="tokenizer", use_fast=False)
    noise_scheduler = DDPMScheduler.from_pretrained(args.pretrained_model_name_or_path, subfolder="scheduler")
    text_encoder = CLIPTextModel.from_pretrained(args.pretrained_model_name_or_path, subfolder="text_encoder")
    vae = AutoencoderKL.from_pretrained(args.pretrained_model_name_or_path, subfolder="vae")
    unet = UNet2DConditionModel.from_pretrained(args.pretrained_model_name_or_path, subfolder="unet")

    vae.requires_grad_(False)
    text_encoder.requires_grad_(False)
    unet.requires_grad_(False)

    # For mixed precision training we cast all non-trainable weights to half-precision
    weight_dtype = torch.float32
    if accelerator.mixed_precision == "fp16":
        weight_dtype = torch.float16  # may: precision
    elif accelerator.mixed_precision == "bf16":
        weight_dtype = torch.bfloat16

    unet.to(accelerator.device, dtype=weight_dtype)
    vae.to(accelerator.device, dtype=torch.float32)
    text_encoder.to(accelerator.device, dtype=weight_dtype)

    if args.enable_xformers_memory_efficient_attention:  # may: kernels
        if is_xformers_available():  # may: kernels
            import xformers  # may: kernels, dependencies

            xformers_version = version.parse(xformers.__version__)
            if xformers_version == version.parse("0.0.16"):
                logger.warning("xFormers 0.0.16 cannot be used for training in some GPUs.")
            unet.enable_xformers_memory_efficient_attention()  # expect: kernels
        else:
            raise ValueError("xformers is not available. Make sure it is installed correctly")

    unet_lora_config = LoraConfig(
        r=args.rank, lora_alpha=args.rank, init_lora_weights="gaussian", target_modules=["to_k", "to_q", "to_v", "to_out.0"]
    )
    unet.add_adapter(unet_lora_config)
    if args.gradient_checkpointing:
        unet.enable_gradient_checkpointing()

    # Enable TF32 for faster training on Ampere GPUs
    if args.allow_tf32:
        torch.backends.cuda.matmul.allow_tf32 = True  # may: precision, device, kernels

    if args.use_8bit_adam:
        import bitsandbytes as bnb  # may: kernels, dependencies

        optimizer_class = bnb.optim.AdamW8bit  # may: kernels
    else:
        optimizer_class = torch.optim.AdamW

    params_to_optimize = list(filter(lambda p: p.requires_grad, unet.parameters()))
    optimizer = optimizer_class(params_to_optimize, lr=args.learning_rate)

    train_dataset = DreamBoothDataset(args.instance_data_dir, args.instance_prompt, tokenizer, size=args.resolution)
    train_dataloader = torch.utils.data.DataLoader(
        train_dataset, batch_size=args.train_batch_size, shuffle=True, collate_fn=collate_fn, num_workers=2
    )
    lr_scheduler = get_scheduler(args.lr_scheduler, optimizer=optimizer, num_training_steps=args.max_train_steps)
    unet, optimizer, train_dataloader, lr_scheduler = accelerator.prepare(unet, optimizer, train_dataloader, lr_scheduler)

    global_step = 0
    num_epochs = math.ceil(args.max_train_steps / len(train_dataloader))
    for epoch in range(num_epochs):
        unet.train()
        for step, batch in enumerate(train_dataloader):
            with accelerator.accumulate(unet):
                pixel_values = batch["pixel_values"].to(dtype=vae.dtype)
                model_input = vae.encode(pixel_values).latent_dist.sample() * vae.config.scaling_factor
                noise = torch.randn_like(model_input)
                bsz = model_input.shape[0]
                timesteps = torch.randint(0, noise_scheduler.config.num_train_timesteps, (bsz,), device=model_input.device)
                noisy_model_input = noise_scheduler.add_noise(model_input, noise, timesteps)
                encoder_hidden_states = text_encoder(batch["input_ids"])[0]
                model_pred = unet(noisy_model_input, timesteps, encoder_hidden_states, return_dict=False)[0]

                if args.snr_gamma is None:
                    loss = F.mse_loss(model_pred.float(), noise.float(), reduction="mean")
                else:
                    snr = compute_snr(noise_scheduler, timesteps)
                    mse_loss_weights = torch.stack([snr, args.snr_gamma * torch.ones_like(timesteps)], dim=1).min(dim=1)[0]
                    mse_loss_weights = mse_loss_weights / snr
                    loss = F.mse_loss(model_pred.float(), noise.float(), reduction="none")
                    loss = loss.mean(dim=list(range(1, len(loss.shape)))) * mse_loss_weights
                    loss = loss.mean()

                accelerator.backward(loss)
                if accelerator.sync_gradients:
                    accelerator.clip_grad_norm_(params_to_optimize, 1.0)
                optimizer.step()
                lr_scheduler.step()
                optimizer.zero_grad()
            global_step += 1
            if global_step >= args.max_train_steps:
                break

        if accelerator.is_main_process and args.validation_prompt is not None:
            pipeline = DiffusionPipeline.from_pretrained(
                args.pretrained_model_name_or_path,
                unet=accelerator.unwrap_model(unet),
                text_encoder=accelerator.unwrap_model(text_encoder),
                torch_dtype=weight_dtype,
            )
            log_validation(pipeline, args, accelerator, epoch)
            gc.collect()

    accelerator.wait_for_everyone()
    if accelerator.is_main_process:
        unet_lora_state_dict = get_peft_model_state_dict(accelerator.unwrap_model(unet).to(torch.float32))
        torch.save(unet_lora_state_dict, os.path.join(args.output_dir, "pytorch_lora_weights.bin"))
    accelerator.end_training()


if __name__ == "__main__":
    main(parse_args())
