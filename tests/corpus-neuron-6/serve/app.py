"""Text-embedding service (FastAPI)."""
import logging
import os
import time
from typing import List, Optional

import torch
import torch.nn.functional as F
from fastapi import FastAPI, HTTPException
from pydantic import BaseModel
from torch.nn.attention import SDPBackend, sdpa_kernel  # may: kernels
from transformers import AutoModel, AutoTokenizer

log = logging.getLogger("embed-svc")

MODEL_NAME = os.getenv("MODEL_NAME", "BAAI/bge-base-en-v1.5")
MAX_LEN = int(os.getenv("MAX_LEN", "512"))
BUCKETS = (64, 128, 256, 512)
OOM_ERRORS = tuple(e for e in (getattr(torch.cuda, "OutOfMemoryError", None), MemoryError) if e is not None)  # ok


def pick_device() -> torch.device:
    if torch.cuda.is_available():  # expect: device|runtime
        return torch.device("cuda")  # expect: device
    if torch.backends.mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")


DEVICE = pick_device()
DTYPE = torch.float16 if DEVICE.type == "cuda" else torch.float32  # may: device, precision

app = FastAPI()
tokenizer = AutoTokenizer.from_pretrained(MODEL_NAME)
model = AutoModel.from_pretrained(MODEL_NAME, torch_dtype=DTYPE).to(DEVICE).eval()
model = torch.compile(model, mode="reduce-overhead", dynamic=False)  # expect: compilation


class EmbedRequest(BaseModel):
    texts: List[str]
    normalize: bool = True
    request_id: Optional[str] = None


def bucket_len(n: int) -> int:
    for b in BUCKETS:
        if n <= b:
            return b
    return MAX_LEN


@torch.inference_mode()
def embed(texts: List[str], normalize: bool) -> torch.Tensor:
    longest = max(len(tokenizer.tokenize(t)) + 2 for t in texts)
    batch = tokenizer(
        texts,
        padding="max_length",  # ok
        max_length=bucket_len(longest),
        truncation=True,
        return_tensors="pt",
    ).to(DEVICE)
    with sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION]):  # expect: kernels
        out = model(**batch).last_hidden_state[:, 0]
    return F.normalize(out.float(), dim=-1) if normalize else out.float()


@app.post("/embed")
def embed_endpoint(req: EmbedRequest):
    t0 = time.perf_counter()
    try:
        vecs = embed(req.texts, req.normalize)
    except OOM_ERRORS:
        torch.cuda.empty_cache()  # expect: device|runtime
        raise HTTPException(status_code=503, detail="out of memory, retry with a smaller batch")
    log.info("embedded %d texts in %.1f ms", len(req.texts), (time.perf_counter() - t0) * 1e3)
    return {"embeddings": vecs.cpu().tolist()}


@app.get("/healthz")
def healthz():
    info = {"device": str(DEVICE)}
    if DEVICE.type == "cuda":  # may: device
        info["memory_allocated"] = torch.cuda.memory_allocated()  # expect: device|runtime
    return info
