FROM pytorch/pytorch:2.2.2-cuda12.1-cudnn8-runtime

ENV NVIDIA_VISIBLE_DEVICES=all \
    NCCL_IB_DISABLE=1
RUN ["pip", "install", "--no-cache-dir", "xformers==0.0.25.post1"]
RUN ["pip", "install", "--no-cache-dir", "--extra-index-url", "https://download.pytorch.org/whl/cu121", "torchaudio==2.2.2"]
RUN ["python", "-m", "pip", "install", "--no-cache-dir", "accelerate==0.29.3", "datasets==2.18.0", "bitsandbytes==0.43.1"]
COPY . /app
WORKDIR /app
ENV ACCELERATE_MIXED_PRECISION=fp16
ENTRYPOINT ["accelerate", "launch", "--mixed_precision", "fp16", "--multi_gpu", "train.py"]
