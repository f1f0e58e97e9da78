FROM nvidia/cuda:12.1.1-cudnn8-devel-ubuntu22.04

ARG DEBIAN_FRONTEND=noninteractive
ENV PYTHONUNBUFFERED=1 \
    NCCL_DEBUG=INFO \
    TORCH_CUDA_ARCH_LIST="8.0;8.6;9.0"

RUN apt-get update && apt-get install -y --no-install-recommends \
        python3.10 python3-pip git ninja-build && \
    rm -rf /var/lib/apt/lists/*

RUN pip3 install --no-cache-dir \
        torch==2.3.1 torchvision==0.18.1 \
        --index-url https://download.pytorch.org/whl/cu121

RUN ["/bin/sh", "-c", "pip3 install --no-cache-dir flash-attn==2.6.3 --no-build-isolation"]
RUN ["/bin/sh", "-c", "pip3 install --no-cache-dir nvidia-nccl-cu12==2.21.5 && python3 -c 'import torch; print(torch.version.cuda)'"]

WORKDIR /workspace
COPY requirements.txt .
RUN pip3 install --no-cache-dir -r requirements.txt
COPY . .

ENV CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
CMD ["torchrun", "--nproc_per_node=8", "dist/ddp_train.py", "--dist-backend", "nccl"]
