# target: xla
"""Compile a Hugging Face sequence classifier for Inferentia2 with torch_neuronx.trace."""
import argparse
import os

import torch
import torch_neuronx  # ok
import torch_xla.core.xla_model as xm  # ok
from transformers import AutoModelForSequenceClassification, AutoTokenizer

os.environ["NEURON_CC_FLAGS"] = os.environ.get("NEURON_CC_FLAGS", "") + " --auto-cast matmult --auto-cast-type fp16"  # expect: precision


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="distilbert-base-uncased-finetuned-sst-2-english")
    parser.add_argument("--seq-len", type=int, default=128)
    parser.add_argument("--batch-size", type=int, default=1)
    parser.add_argument("--output", default="model_neuron.pt")
    args = parser.parse_args()

    tokenizer = AutoTokenizer.from_pretrained(args.model)
    model = AutoModelForSequenceClassification.from_pretrained(args.model, torchscript=True)
    model.eval()
    model.half()  # expect-one(trace-half): precision

    device = xm.xla_device()  # ok
    model.to(device)  # expect-one(trace-move): runtime

    example = tokenizer(
        ["The movie was great"] * args.batch_size,
        padding="max_length",
        max_length=args.seq_len,
        truncation=True,
        return_tensors="pt",
    )  # ok
    example_inputs = (example["input_ids"], example["attention_mask"])

    neuron_model = torch_neuronx.trace(model, example_inputs, compiler_workdir="./compiler_cache")  # expect-one(trace-half): precision; expect-one(trace-move): runtime
    torch.jit.save(neuron_model, args.output)  # ok

    reloaded = torch.jit.load(args.output)  # ok
    with torch.no_grad():
        logits = reloaded(*example_inputs)[0]
    print("predicted label:", model.config.id2label[int(logits.argmax(-1)[0])])


if __name__ == "__main__":
    main()
