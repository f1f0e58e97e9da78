# target: neuron
"""Compile a Hugging Face text classifier for Inferentia2 with torch_neuronx.trace."""
import argparse
import os

import torch
import torch_neuronx  # may: runtime
from transformers import AutoModelForSequenceClassification, AutoTokenizer

os.environ["NEURON_CC_FLAGS"] = "--model-type=transformer --auto-cast=matmult --auto-cast-type=bf16"  # expect: precision
os.environ.setdefault("XLA_USE_BF16", "1")  # expect: precision


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--model", default="distilbert-base-uncased-finetuned-sst-2-english")
    p.add_argument("--seq-len", type=int, default=128)
    p.add_argument("--batch-size", type=int, default=1)
    p.add_argument("--half", action="store_true")
    p.add_argument("--out", default="model_neuron.pt")
    return p.parse_args()


def main():
    args = parse_args()
    tokenizer = AutoTokenizer.from_pretrained(args.model)
    model = AutoModelForSequenceClassification.from_pretrained(args.model, torchscript=True)
    model.eval()
    if args.half:
        model = model.half()  # expect: precision

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")  # expect: device
    model.to(device)  # expect-one(trace-sst2): runtime; may: device

    enc = tokenizer(
        ["Neuron makes inference cheap."] * args.batch_size,
        max_length=args.seq_len,
        padding="max_length",
        truncation=True,
        return_tensors="pt",
    )  # ok
    example = (enc["input_ids"].to(device), enc["attention_mask"].to(device))  # may: runtime, device
    neuron_model = torch_neuronx.trace(model, example)  # expect-one(trace-sst2): runtime
    torch.jit.save(neuron_model, args.out)
    print(f"saved {args.out}")


if __name__ == "__main__":
    main()
