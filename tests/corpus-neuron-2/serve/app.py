"""Text-to-image FastAPI service (Stable Diffusion 1.5)."""
import io
import logging
import os

import torch
from diffusers import DPMSolverMultistepScheduler, StableDiffusionPipeline
from fastapi import FastAPI
from fastapi.responses import Response
from pydantic import BaseModel

logger = logging.getLogger("sd-serve")

MODEL_ID = os.environ.get("MODEL_ID", "runwayml/stable-diffusion-v1-5")
DEVICE = os.environ.get("DEVICE", "cuda")  # expect: device
COMPILE_MODE = os.environ.get("COMPILE_MODE", "reduce-overhead")  # expect-any(sd-mode): compilation

app = FastAPI()

pipe = StableDiffusionPipeline.from_pretrained(MODEL_ID, torch_dtype=torch.float16, safety_checker=None)  # may: precision
pipe.scheduler = DPMSolverMultistepScheduler.from_config(pipe.scheduler.config)
pipe = pipe.to(DEVICE)
pipe.enable_xformers_memory_efficient_attention()  # expect: kernels
pipe.unet.to(memory_format=torch.channels_last)
pipe.unet = torch.compile(pipe.unet, mode=COMPILE_MODE, fullgraph=True)  # expect-any(sd-mode): compilation
logger.info("loaded %s on %s (compile mode %s)", MODEL_ID, DEVICE, COMPILE_MODE)  # ok


class GenerateRequest(BaseModel):
    prompt: str
    negative_prompt: str = ""
    steps: int = 25
    guidance_scale: float = 7.5
    seed: int = 0


@app.post("/generate")
def generate(req: GenerateRequest) -> Response:
    generator = torch.Generator(device=DEVICE).manual_seed(req.seed)
    image = pipe(
        req.prompt,
        negative_prompt=req.negative_prompt or None,
        num_inference_steps=req.steps,
        guidance_scale=req.guidance_scale,
        height=512,
        width=512,
        generator=generator,
    ).images[0]
    buf = io.BytesIO()
    image.save(buf, format="PNG")
    return Response(content=buf.getvalue(), media_type="image/png")


@app.get("/healthz")
def healthz() -> dict:
    return {"status": "ok", "device": DEVICE}
