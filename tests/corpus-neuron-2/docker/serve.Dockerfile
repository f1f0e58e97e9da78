FROM public.ecr.aws/neuron/pytorch-inference-neuronx:2.1.2-neuronx-py310-sdk2.20.0-ubuntu20.04

ENV NEURON_CC_FLAGS="--auto-cast all --auto-cast-type bf16"
ENV XLA_DOWNCAST_BF16=1
ENV TORCH_NCCL_ASYNC_ERROR_HANDLING=1
ENV NEURON_RT_NUM_CORES=2

RUN pip install --no-cache-dir \
        diffusers==0.30.0 \
        transformers==4.44.2 \
        fastapi==0.111.0 \
        uvicorn==0.30.1

RUN pip install --no-cache-dir \
        xformers==0.0.27 \
        sentencepiece

COPY serve/ /opt/serve/
WORKDIR /opt/serve
ENV CUDA_VISIBLE_DEVICES=""
EXPOSE 8080
CMD ["uvicorn", "app:app", "--host", "0.0.0.0", "--port", "8080"]
