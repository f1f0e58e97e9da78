# target: neuron
"""Export a fine-tuned BERT classifier for Inferentia2 and compare export methods."""
import argparse
import os

import torch
import torch_neuronx  # may: runtime
import torch_xla.core.xla_model as xm  # expect: runtime
from transformers import AutoModelForSequenceClassification, AutoTokenizer

os.environ["NEURON_CC_FLAGS"] = "--model-type=transformer --auto-cast=all --auto-cast-type=fp16"  # expect: precision
os.environ.setdefault("XLA_USE_BF16", "1")  # expect: precision


def parse_args():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--model", default="textattack/bert-base-uncased-MRPC")
    p.add_argument("--seq-len", type=int, default=128)
    p.add_argument("--method", choices=["neuron", "script", "compile"], default="neuron")
    p.add_argument("--half", action="store_true", help="cast weights to fp16 before export")  # may: precision
    p.add_argument("--out", default="bert_neuron.pt")
    return p.parse_args()


def export(model, example, method):
    if method == "neuron":
        return torch_neuronx.trace(model, example, compiler_args=["--optlevel", "2"])  # may: runtime
    if method == "script":
        scripted = torch.jit.script(model)  # expect: compilation
        return torch.jit.freeze(scripted)  # expect: compilation
    if method == "compile":
        return torch.compile(model)  # expect: compilation
    raise ValueError(f"unknown export method {method}")


def main():
    args = parse_args()
    tokenizer = AutoTokenizer.from_pretrained(args.model)
    model = AutoModelForSequenceClassification.from_pretrained(args.model, torchscript=True)
    model.eval()
    if args.half:
        model = model.half()  # expect: precision

    device = xm.xla_device()  # may: runtime
    model.to(device)  # expect: runtime

    paraphrase = tokenizer(
        "The company HuggingFace is based in New York City",
        "HuggingFace's headquarters are situated in Manhattan",
        padding="max_length", max_length=args.seq_len, truncation=True,  # ok
        return_tensors="pt",
    )
    example = (paraphrase["input_ids"], paraphrase["attention_mask"], paraphrase["token_type_ids"])
    exported = export(model, example, args.method)
    torch.jit.save(exported, args.out)
    print(f"saved {args.method} export to {args.out}")


if __name__ == "__main__":
    main()
