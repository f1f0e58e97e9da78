"""Minimal OpenAI-compatible /v1/completions server on top of vLLM's offline engine.

    python serve_vllm_openai.py --model meta-llama/Meta-Llama-3-8B-Instruct --port 8000
"""
import argparse
import os
import time
import uuid
from typing import List, Optional

import uvicorn
from fastapi import FastAPI
from pydantic import BaseModel
from vllm import LLM, SamplingParams  # may: dependencies

os.environ.setdefault("CUDA_VISIBLE_DEVICES", "0,1")  # expect: environment
os.environ.setdefault("VLLM_ATTENTION_BACKEND", "FLASH_ATTN")  # may: kernels


class CompletionRequest(BaseModel):
    model: str
    prompt: str
    max_tokens: int = 256
    temperature: float = 0.7
    top_p: float = 0.95
    stop: Optional[List[str]] = None


def build_engine(args) -> LLM:
    return LLM(
        model=args.model,
        tensor_parallel_size=args.tensor_parallel_size,
        gpu_memory_utilization=args.gpu_memory_utilization,  # may: device
        dtype=args.dtype,
        device="cuda",  # expect: device
        max_model_len=args.max_model_len,
        enforce_eager=False,
    )


def create_app(llm: LLM, model_name: str) -> FastAPI:
    app = FastAPI(title="completions")

    @app.get("/health")
    def health():
        return {"status": "ok"}

    @app.post("/v1/completions")
    def completions(req: CompletionRequest):
        params = SamplingParams(max_tokens=req.max_tokens, temperature=req.temperature, top_p=req.top_p, stop=req.stop)
        out = llm.generate([req.prompt], params)[0]
        return {
            "id": f"cmpl-{uuid.uuid4().hex}",
            "object": "text_completion",
            "created": int(time.time()),
            "model": model_name,
            "choices": [{"index": 0, "text": out.outputs[0].text, "finish_reason": out.outputs[0].finish_reason}],
        }

    return app


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", required=True)
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--tensor-parallel-size", type=int, default=2)
    parser.add_argument("--gpu-memory-utilization", type=float, default=0.90)
    parser.add_argument("--dtype", default="bfloat16")
    parser.add_argument("--max-model-len", type=int, default=8192)
    args = parser.parse_args()
    llm = build_engine(args)
    uvicorn.run(create_app(llm, args.model), host="0.0.0.0", port=args.port)


if __name__ == "__main__":
    main()
