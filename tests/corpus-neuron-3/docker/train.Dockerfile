# Trainium fine-tuning image (trn1.32xlarge), built on the AWS Neuron deep learning container.
ARG REGION=us-west-2
FROM 763104351884.dkr.ecr.${REGION}.amazonaws.com/pytorch-training-neuronx:2.1.2-neuronx-py310-sdk2.20.2-ubuntu20.04

RUN pip install --no-cache-dir "optimum-neuron==0.0.25" "datasets==2.20.0" "tensorboard==2.17.0"

# Compiler defaults shared by every job.
ENV NEURON_CC_FLAGS="--model-type=transformer --auto-cast=matmult --auto-cast-type=bf16 --cache_dir=/var/tmp/neuron-compile-cache"
ENV XLA_DOWNCAST_BF16=1
ENV NEURON_RT_STOCHASTIC_ROUNDING_EN=1
ENV MALLOC_ARENA_MAX=64
ENV FI_EFA_USE_DEVICE_RDMA=1 \
    FI_PROVIDER=efa \
    FI_EFA_FORK_SAFE=1

WORKDIR /opt/ml/code
COPY run_clm.py requirements.txt ./
RUN pip install --no-cache-dir -r requirements.txt

ENTRYPOINT ["torchrun", "--nproc_per_node=32", "--nnodes=1", "run_clm.py"]
CMD ["--model_id", "meta-llama/Llama-2-7b-hf", "--bf16", "True", "--tensor_parallel_size", "8", "--per_device_train_batch_size", "1", "--gradient_accumulation_steps", "16", "--output_dir", "/opt/ml/model"]
