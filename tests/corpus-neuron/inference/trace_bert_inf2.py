# target: xla
"""Compile a BERT paraphrase classifier for Inferentia2 with torch_neuronx.trace (first attempt, from a GPU script)."""
import argparse

import torch
import torch_neuronx
import torch_xla.core.xla_model as xm
from transformers import AutoModelForSequenceClassification, AutoTokenizer

MODEL = "bert-base-cased-finetuned-mrpc"
SEQ_LEN = 128


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--output", default="bert_mrpc_neuron.pt")
    args = parser.parse_args()

    tokenizer = AutoTokenizer.from_pretrained(MODEL)
    model = AutoModelForSequenceClassification.from_pretrained(MODEL, torchscript=True)
    model.eval()

    device = xm.xla_device()
    model = model.half()  # expect: precision
    model.to(device)  # expect: runtime

    enc = tokenizer("The company HuggingFace is based in New York City", "HuggingFace's headquarters are situated in Manhattan",
                    max_length=SEQ_LEN, padding="max_length", truncation=True, return_tensors="pt")  # ok
    example = (enc["input_ids"].to(device), enc["attention_mask"].to(device), enc["token_type_ids"].to(device))  # may: runtime

    neuron_model = torch_neuronx.trace(model, example, compiler_workdir="./neuron_compile")
    torch.jit.save(neuron_model, args.output)
    print(f"saved {args.output}")


if __name__ == "__main__":
    main()
