"""SDXL base + refiner text-to-image, as deployed on the A10G endpoint.

    python diffusers_sdxl_infer.py --prompt "an astronaut riding a horse, 35mm" --out astronaut.png
"""
import argparse

import torch
import torch.nn.functional as F
from diffusers import DiffusionPipeline, StableDiffusionXLImg2ImgPipeline


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--prompt", required=True)
    parser.add_argument("--out", default="out.png")
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--device", default="cuda", choices=["cpu", "cuda", "mps"])  # expect: kernels; may: device
    parser.add_argument("--xformers", action="store_true")
    parser.add_argument("--latent-upscale", type=float, default=1.0)
    return parser.parse_args()


def load_pipelines(use_xformers: bool):
    base = DiffusionPipeline.from_pretrained("stabilityai/stable-diffusion-xl-base-1.0", torch_dtype=torch.bfloat16, use_safetensors=True)
    base.to("cuda")  # expect: device
    if use_xformers:
        base.enable_xformers_memory_efficient_attention()  # expect: kernels
    refiner = StableDiffusionXLImg2ImgPipeline.from_pretrained(
        "stabilityai/stable-diffusion-xl-refiner-1.0",
        text_encoder_2=base.text_encoder_2,
        vae=base.vae,
        torch_dtype=torch.bfloat16,
        use_safetensors=True,
    )
    refiner.to("cuda")  # expect: device
    return base, refiner


def upscale_latents(latents: torch.Tensor, factor: float) -> torch.Tensor:
    if factor == 1.0:
        return latents
    return F.interpolate(latents, scale_factor=factor, mode="bicubic", antialias=True)  # expect: compilation


def main():
    args = parse_args()
    base, refiner = load_pipelines(args.xformers)
    generator = torch.Generator(device="cuda").manual_seed(args.seed)  # expect: device
    with torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=False, enable_mem_efficient=False):  # expect: kernels
        latents = base(prompt=args.prompt, num_inference_steps=args.steps, denoising_end=0.8, output_type="latent", generator=generator).images
        latents = upscale_latents(latents, args.latent_upscale)
        image = refiner(prompt=args.prompt, num_inference_steps=args.steps, denoising_start=0.8, image=latents, generator=generator).images[0]
    image.save(args.out)


if __name__ == "__main__":
    main()
