import argparse
import copy

import torch
import torch.nn.functional as F
from accelerate import Accelerator
from diffusers import AutoencoderKL, DDPMScheduler, StableDiffusionPipeline, UNet2DConditionModel
from diffusers.models.attention_processor import AttnProcessor2_0
from diffusers.training_utils import EMAModel, compute_snr
from transformers import CLIPTextModel, CLIPTokenizer

torch.backends.cuda.matmul.allow_tf32 = True  # may: precision, device, kernels
torch.backends.cudnn.allow_tf32 = True  # may: precision, device, kernels


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--pretrained_model_name_or_path", default="stabilityai/stable-diffusion-2-1-base")
    p.add_argument("--train_data", default="data/pokemon.pt")
    p.add_argument("--mixed_precision", default="fp16", choices=["no", "fp16", "bf16"])  # expect-any(t2i_mp): precision
    p.add_argument("--use_ema", action="store_true")
    p.add_argument("--snr_gamma", type=float, default=5.0)
    p.add_argument("--max_train_steps", type=int, default=15000)
    p.add_argument("--validation_prompts", nargs="*", default=["a cartoon dragon"])
    return p.parse_args()


def main():
    args = parse_args()
    accelerator = Accelerator(mixed_precision=args.mixed_precision)  # expect-any(t2i_mp): precision

    tokenizer = CLIPTokenizer.from_pretrained(args.pretrained_model_name_or_path, subfolder="tokenizer")
    text_encoder = CLIPTextModel.from_pretrained(args.pretrained_model_name_or_path, subfolder="text_encoder")
    vae = AutoencoderKL.from_pretrained(args.pretrained_model_name_or_path, subfolder="vae")
    unet = UNet2DConditionModel.from_pretrained(args.pretrained_model_name_or_path, subfolder="unet")
    noise_scheduler = DDPMScheduler.from_pretrained(args.pretrained_model_name_or_path, subfolder="scheduler")
    unet.set_attn_processor(AttnProcessor2_0())  # may: kernels

    ema_unet = None
    if args.use_ema:
        ema_unet = EMAModel(copy.deepcopy(unet).parameters(), model_cls=UNet2DConditionModel, model_config=unet.config)

    weight_dtype = {"fp16": torch.float16, "bf16": torch.bfloat16}.get(accelerator.mixed_precision, torch.float32)  # may: precision
    vae.to(accelerator.device, dtype=weight_dtype)
    text_encoder.to(accelerator.device, dtype=weight_dtype)

    data = torch.load(args.train_data)  # list of (pixel_values, caption)
    optimizer = torch.optim.AdamW(unet.parameters(), lr=1e-5)
    unet, optimizer = accelerator.prepare(unet, optimizer)
    if ema_unet is not None:
        ema_unet.to(accelerator.device)

    for step, (pixels, captions) in enumerate(data):
        ids = tokenizer(captions, padding="max_length", max_length=tokenizer.model_max_length, truncation=True, return_tensors="pt").input_ids  # ok
        latents = vae.encode(pixels.to(accelerator.device, dtype=weight_dtype)).latent_dist.sample() * 0.18215
        noise = torch.randn_like(latents)
        t = torch.randint(0, noise_scheduler.config.num_train_timesteps, (latents.shape[0],), device=latents.device)
        noisy = noise_scheduler.add_noise(latents, noise, t)
        hidden = text_encoder(ids.to(accelerator.device))[0]
        pred = unet(noisy, t, hidden).sample
        snr = compute_snr(noise_scheduler, t)
        weights = torch.clamp(snr, max=args.snr_gamma) / snr
        loss = (F.mse_loss(pred.float(), noise.float(), reduction="none").mean(dim=[1, 2, 3]) * weights).mean()
        accelerator.backward(loss)
        optimizer.step()
        optimizer.zero_grad()
        if ema_unet is not None:
            ema_unet.step(unet.parameters())
        if step >= args.max_train_steps:
            break

    if accelerator.is_main_process:
        pipe = StableDiffusionPipeline.from_pretrained(
            args.pretrained_model_name_or_path, unet=accelerator.unwrap_model(unet), torch_dtype=weight_dtype
        )
        pipe = pipe.to("cuda")  # expect: device
        pipe.enable_xformers_memory_efficient_attention()  # expect: kernels
        generator = torch.Generator("cuda").manual_seed(0)  # expect: device
        for prompt in args.validation_prompts:
            with torch.autocast(device_type="cuda", dtype=torch.float16):  # expect: device; may: precision
                image = pipe(prompt, num_inference_steps=30, generator=generator).images[0]
            image.save(f"val_{prompt.replace(' ', '_')}.png")
        torch.cuda.empty_cache()  # expect: device|runtime


if __name__ == "__main__":
    main()
