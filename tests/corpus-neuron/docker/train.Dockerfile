FROM pytorch/pytorch:2.2.2-cuda12.1-cudnn8-devel
LABEL org.opencontainers.image.source="https://github.com/example/sdxl-trainer"
ENV PYTHONUNBUFFERED=1 HF_HOME=/cache/hf

RUN apt-get update && apt-get install -y --no-install-recommends ffmpeg libsm6 libxext6 \
    && rm -rf /var/lib/apt/lists/*

WORKDIR /app
COPY requirements-gpu.txt /app/
RUN pip install --no-cache-dir -r requirements-gpu.txt \
    && pip install --no-cache-dir xformers==0.0.25 --index-url https://download.pytorch.org/whl/cu121

ENV CUDA_VISIBLE_DEVICES=0
ENV PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True

COPY . /app
CMD ["accelerate", "launch", "--mixed_precision", "bf16", "train_hf_trainer.py"]
