"""Offline batch generation with vLLM.

    python serving/vllm_server.py --model meta-llama/Meta-Llama-3-8B-Instruct --tp 2 prompts.txt
"""
import argparse
import json
import logging
import sys

import torch
from vllm import LLM, SamplingParams  # may: dependencies, kernels

logger = logging.getLogger("vllm_batch")


def describe_runtime() -> None:
    logger.info("torch %s built with CUDA %s", torch.__version__, torch.version.cuda)  # expect: environment|dependencies
    if torch.version.cuda is None:  # expect: environment|dependencies
        logger.warning("this torch build has no CUDA support; vLLM will not start")  # ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", required=True)
    parser.add_argument("--tp", type=int, default=1, help="tensor parallel size")
    parser.add_argument("--max-tokens", type=int, default=256)
    parser.add_argument("prompts", type=argparse.FileType("r"))
    args = parser.parse_args()

    describe_runtime()
    prompts = [line.strip() for line in args.prompts if line.strip()]
    llm = LLM(model=args.model, tensor_parallel_size=args.tp, gpu_memory_utilization=0.90, dtype="float16")  # may: device, precision
    params = SamplingParams(temperature=0.7, top_p=0.95, max_tokens=args.max_tokens)  # ok
    for output in llm.generate(prompts, params):
        json.dump({"prompt": output.prompt, "text": output.outputs[0].text}, sys.stdout)
        sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO)
    sys.exit(main())
