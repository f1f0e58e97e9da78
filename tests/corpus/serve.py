"""FastAPI inference server for a decoder-only text-generation model.

Supports an optional TensorRT engine and CUDA-graph replay for the decode step.
"""
import importlib.util
import logging
import os
import subprocess
import time
from typing import List, Optional

import torch
import torch.nn.functional as F
from fastapi import FastAPI
from pydantic import BaseModel

try:
    import tensorrt as trt  # expect: kernels
except ImportError:
    trt = None

try:
    from vllm import LLM, SamplingParams  # expect: kernels
except ImportError:
    LLM = SamplingParams = None

try:
    import pynvml  # expect: kernels
    pynvml.nvmlInit()
except Exception:
    pynvml = None

HAS_FLASH_ATTN = importlib.util.find_spec("flash_attn") is not None  # expect: kernels
HAS_XFORMERS = importlib.util.find_spec("xformers") is not None  # expect: kernels

logger = logging.getLogger("serve")
app = FastAPI(title="generator")

GPU_ID = int(os.environ.get("CUDA_VISIBLE_DEVICES", "0").split(",")[0])  # expect: environment
MODEL_PATH = os.environ.get("MODEL_PATH", "/models/llm.pt")  # ok
MAX_BATCH = int(os.getenv("MAX_BATCH", "16"))  # ok


class GenerateRequest(BaseModel):
    prompt_ids: List[int]
    max_new_tokens: int = 64
    temperature: float = 1.0


def gpu_memory_report() -> dict:
    free, total = torch.cuda.mem_get_info()  # expect: runtime
    out = {"free_gb": free / 2**30, "total_gb": total / 2**30}  # ok
    if pynvml is not None:
        handle = pynvml.nvmlDeviceGetHandleByIndex(0)
        out["util"] = pynvml.nvmlDeviceGetUtilizationRates(handle).gpu
    return out


def driver_info() -> str:
    return subprocess.check_output(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"]).decode()  # expect: environment


def _sample(logits: torch.Tensor, temperature: float) -> torch.Tensor:
    probs = F.softmax(logits.float() / max(temperature, 1e-5), dim=-1)  # ok
    return torch.multinomial(probs, 1)


class Generator:
    def __init__(self, path: str, device: str = "cuda:0"):  # expect: device
        self.device = torch.device(device)  # ok
        state = torch.load(path, map_location="cpu")  # ok
        self.model = state["model"] if isinstance(state, dict) else state
        self.model.eval().to(self.device)  # ok
        self.model = torch.compile(self.model, mode="reduce-overhead")  # expect: compilation
        self.sample_fn = torch.compile(_sample, dynamic=True)  # expect: compilation
        self.stream = torch.cuda.Stream(device=self.device)  # expect: runtime
        self.cuda_version = torch.version.cuda  # expect: environment
        self.graph = None
        self.static_input = None
        self.static_logits = None
        logger.info(f"model loaded on cuda:{GPU_ID} (cuda {self.cuda_version})")  # ok

    @torch.inference_mode()
    def capture(self, batch_size: int, seq_len: int) -> None:
        self.static_input = torch.zeros(batch_size, seq_len, dtype=torch.long, device=self.device)  # ok
        self.stream.wait_stream(torch.cuda.current_stream())  # expect: runtime
        with torch.cuda.stream(self.stream):  # expect: runtime
            for _ in range(3):
                self.model(self.static_input)
        torch.cuda.current_stream().wait_stream(self.stream)  # expect: runtime
        self.graph = torch.cuda.CUDAGraph()  # expect: runtime
        with torch.cuda.graph(self.graph):  # expect: runtime
            self.static_logits = self.model(self.static_input)

    @torch.inference_mode()
    def step(self, ids: torch.Tensor) -> torch.Tensor:
        if self.graph is not None and ids.shape == self.static_input.shape:
            self.static_input.copy_(ids)
            self.graph.replay()
            return self.static_logits
        with torch.autocast("cuda", dtype=torch.bfloat16):  # expect: device
            return self.model(ids)

    @torch.inference_mode()
    def generate(self, prompt_ids, max_new_tokens: int, temperature: float):
        ids = torch.tensor([prompt_ids], dtype=torch.long).to(self.device)  # ok
        start = torch.cuda.Event(enable_timing=True)  # expect: runtime
        end = torch.cuda.Event(enable_timing=True)  # expect: runtime
        start.record()
        for _ in range(max_new_tokens):
            next_id = self.sample_fn(self.step(ids)[:, -1, :], temperature)
            ids = torch.cat([ids, next_id], dim=-1)
            if next_id.item() == 0:  # ok
                break
        end.record()
        torch.cuda.synchronize()  # expect: runtime
        return ids[0].tolist(), start.elapsed_time(end)


generator: Optional[Generator] = None


@app.on_event("startup")
def load() -> None:
    global generator
    if not torch.cuda.is_available():  # expect: runtime
        raise RuntimeError("No cuda device visible; check the driver")  # ok
    torch.cuda.set_device(0)  # expect: runtime
    props = torch.cuda.get_device_properties(0)  # expect: runtime
    logger.info("device %s with %d MB (cuda)", props.name, props.total_memory // 2**20)  # ok
    logger.info("current device index %d", torch.cuda.current_device())  # expect: runtime
    generator = Generator(MODEL_PATH)


@app.post("/generate")
def generate(req: GenerateRequest):
    t0 = time.perf_counter()  # ok
    ids, gpu_ms = generator.generate(req.prompt_ids, req.max_new_tokens, req.temperature)
    return {"ids": ids, "gpu_ms": gpu_ms, "wall_ms": (time.perf_counter() - t0) * 1000}  # ok


@app.post("/reset")
def reset():
    torch.cuda.empty_cache()  # expect: runtime
    return {"status": "ok", "memory": gpu_memory_report()}


@app.get("/health")
def health():
    return {"status": "ok", "trt": trt is not None, "flash_attn": HAS_FLASH_ATTN}  # ok
