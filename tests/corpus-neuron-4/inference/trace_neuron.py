# target: neuron
"""Trace a BERT classifier for Inferentia2 with torch_neuronx.trace.

    python inference/trace_neuron.py --model bert-base-cased-finetuned-mrpc --seq-len 128
"""
import argparse

import torch
import torch_neuronx
from transformers import AutoModelForSequenceClassification, AutoTokenizer


def load_model(name: str, half: bool) -> torch.nn.Module:
    model = AutoModelForSequenceClassification.from_pretrained(name, torchscript=True)
    model.eval()
    if half:
        model = model.half()  # expect: precision
    # keep the warm-up on the GPU when one is present
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")  # expect: device
    model.to(device)  # expect-any(move-before-trace): runtime
    return model


def example_inputs(tokenizer, seq_len: int):
    enc = tokenizer(
        "The company HuggingFace is based in New York City",
        "HuggingFace's headquarters are situated in Manhattan",
        padding="max_length",  # ok
        max_length=seq_len,
        truncation=True,
        return_tensors="pt",
    )
    return enc["input_ids"], enc["attention_mask"], enc["token_type_ids"]


class Postprocess(torch.nn.Module):
    def forward(self, logits: torch.Tensor) -> torch.Tensor:
        return logits.softmax(-1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="bert-base-cased-finetuned-mrpc")
    parser.add_argument("--seq-len", type=int, default=128)
    parser.add_argument("--half", action="store_true")
    parser.add_argument("--output", default="model_neuron.pt")
    args = parser.parse_args()

    tokenizer = AutoTokenizer.from_pretrained(args.model)
    model = load_model(args.model, args.half)
    inputs = example_inputs(tokenizer, args.seq_len)

    post = torch.jit.script(Postprocess())  # expect: compilation
    post = torch.jit.freeze(post.eval())  # expect: compilation

    traced = torch_neuronx.trace(model, inputs, compiler_args=["--auto-cast", "matmult"])  # expect-any(move-before-trace): runtime; may: precision
    torch.jit.save(traced, args.output)  # ok
    reloaded = torch.jit.load(args.output)  # ok
    probs = post(reloaded(*inputs)[0])
    print(probs)


if __name__ == "__main__":
    main()
