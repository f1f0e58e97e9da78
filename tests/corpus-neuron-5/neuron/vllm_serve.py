# target: neuron
"""Serve Llama-3-8B on inf2.24xlarge with vLLM's Neuron backend."""
import os

from vllm import LLM, SamplingParams  # may: dependencies

os.environ.setdefault("NEURON_RT_VISIBLE_CORES", "0-11")  # ok
os.environ["NEURON_CONTEXT_LENGTH_BUCKETS"] = "128,512,1024,2048"
os.environ["NEURON_TOKEN_GEN_BUCKETS"] = "128,512,1024,2048"

llm = LLM(
    model="meta-llama/Meta-Llama-3-8B-Instruct",
    max_num_seqs=8,
    max_model_len=2048,
    block_size=2048,
    device="neuron",  # ok
    tensor_parallel_size=12,
)
params = SamplingParams(temperature=0.8, top_p=0.95, max_tokens=256)
for out in llm.generate(["The capital of France is", "Trainium is"], params):
    print(out.prompt, "->", out.outputs[0].text)
