#!/usr/bin/env python
"""Stable Diffusion img2img from the command line.

Example:
    python pipelines/sd_img2img.py --image sketch.png --prompt "a fantasy landscape"

Needs a CUDA GPU with at least 8 GB of memory in fp16.
"""
import argparse
import logging

import torch
from diffusers import DPMSolverMultistepScheduler, StableDiffusionImg2ImgPipeline
from PIL import Image

logger = logging.getLogger(__name__)


def load_pipeline(model_id: str, enable_xformers: bool = True) -> StableDiffusionImg2ImgPipeline:
    pipe = StableDiffusionImg2ImgPipeline.from_pretrained(
        model_id,
        torch_dtype=torch.float16,  # may: precision
        variant="fp16",  # may: precision
        safety_checker=None,
    )
    pipe.scheduler = DPMSolverMultistepScheduler.from_config(pipe.scheduler.config)
    if enable_xformers:
        logger.info("Enabling xFormers memory-efficient attention")  # ok
        pipe.enable_xformers_memory_efficient_attention()  # expect: kernels
    else:
        pipe.enable_attention_slicing()  # ok
    pipe = pipe.to("cuda")  # expect: device
    return pipe


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="stabilityai/stable-diffusion-2-1-base")
    parser.add_argument("--image", required=True)
    parser.add_argument("--prompt", required=True)
    parser.add_argument("--strength", type=float, default=0.75)
    parser.add_argument("--steps", type=int, default=25)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-xformers", action="store_true", help="disable xFormers attention (CUDA only)")  # ok
    parser.add_argument("--out", default="out.png")
    args = parser.parse_args()

    pipe = load_pipeline(args.model, enable_xformers=not args.no_xformers)
    init = Image.open(args.image).convert("RGB").resize((768, 512), Image.BICUBIC)  # ok
    generator = torch.Generator(device="cuda").manual_seed(args.seed)  # expect: device
    image = pipe(
        prompt=args.prompt,
        image=init,
        strength=args.strength,
        num_inference_steps=args.steps,
        guidance_scale=7.5,
        generator=generator,
    ).images[0]
    image.save(args.out)
    logger.info("saved %s", args.out)


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO)
    main()
