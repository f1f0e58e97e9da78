# Trn1 training image on the Neuron deep learning container: the target the GPU images are ported to.
FROM public.ecr.aws/neuron/pytorch-training-neuronx:2.1.2-neuronx-py310-sdk2.20.0-ubuntu20.04

ENV PIP_EXTRA_INDEX_URL=https://pip.repos.neuron.amazonaws.com
RUN pip install --no-cache-dir neuronx-distributed==0.9.0 transformers==4.44.2 datasets accelerate

ENV NEURON_RT_LOG_LEVEL=WARNING
ENV NEURON_CC_FLAGS="--model-type transformer"
ENV MALLOC_ARENA_MAX=64

WORKDIR /opt/train
COPY train_trn1_xla.py scripts/slurm_multinode_neuron_ok.sh ./
CMD ["torchrun", "--nproc_per_node=32", "train_trn1_xla.py"]
