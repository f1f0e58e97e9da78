"""Fast SDXL inference, following the diffusers "speed up inference" tutorial."""
import time

import torch
from diffusers import DiffusionPipeline

torch._inductor.config.conv_1x1_as_mm = True  # expect: kernels
torch._inductor.config.coordinate_descent_tuning = True  # expect: kernels
torch._inductor.config.epilogue_fusion = False  # expect: kernels
torch._inductor.config.coordinate_descent_check_all_directions = True  # expect: kernels

pipe = DiffusionPipeline.from_pretrained(
    "stabilityai/stable-diffusion-xl-base-1.0",
    torch_dtype=torch.float16,  # may: precision
    variant="fp16",
    use_safetensors=True,
).to("cuda")  # expect: device
pipe.enable_xformers_memory_efficient_attention()  # expect: kernels
pipe.set_progress_bar_config(disable=True)

pipe.fuse_qkv_projections()
pipe.unet.to(memory_format=torch.channels_last)
pipe.vae.to(memory_format=torch.channels_last)

unet_mode = "max-autotune"
pipe.unet = torch.compile(pipe.unet, mode=unet_mode, fullgraph=True)  # expect: compilation
pipe.vae.decode = torch.compile(pipe.vae.decode, mode="max-autotune", fullgraph=True)  # expect: compilation

prompt = "Astronaut in a jungle, cold color palette, muted colors, detailed, 8k"
for _ in range(3):
    image = pipe(prompt, num_inference_steps=30).images[0]

start = time.perf_counter()
image = pipe(prompt, num_inference_steps=30).images[0]
print(f"latency: {time.perf_counter() - start:.2f}s")
image.save("astronaut.png")
