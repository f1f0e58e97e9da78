"""Compile a BERT paraphrase classifier for Inferentia2 (ported from our GPU export script)."""
import os

import torch
import torch_neuronx
from transformers import AutoModelForSequenceClassification, AutoTokenizer

os.environ["NEURON_CC_FLAGS"] = "--auto-cast all --auto-cast-type bf16"  # expect: precision

MODEL = "bert-base-cased-finetuned-mrpc"
SEQ_LEN = 128
device = "cuda" if torch.cuda.is_available() else "cpu"  # expect: device


def encode(tokenizer, a, b):
    enc = tokenizer(a, b, max_length=SEQ_LEN, padding="max_length", truncation=True, return_tensors="pt")  # ok
    return enc["input_ids"], enc["attention_mask"], enc["token_type_ids"]


def main():
    tokenizer = AutoTokenizer.from_pretrained(MODEL)
    model = AutoModelForSequenceClassification.from_pretrained(MODEL, torchscript=True)
    model.eval()
    model.half()  # expect: precision
    model.to(device)  # expect: runtime

    example = encode(tokenizer, "The company HuggingFace is based in New York City", "HuggingFace is in NYC")
    example = tuple(t.to(device) for t in example)  # may: runtime

    neuron_model = torch_neuronx.trace(model, example)  # ok
    neuron_model.save("bert_neuron.pt")

    reloaded = torch.jit.load("bert_neuron.pt")
    with torch.no_grad():
        logits = reloaded(*[t.cpu() for t in example])[0]
    print("paraphrase prob", torch.softmax(logits.float(), -1)[0, 1].item())


if __name__ == "__main__":
    main()
