"""
Causal language modeling with a tiny GPT-style model and the Trainer API.
Precision is picked from the hardware: bf16 on Ampere+, fp16 on older GPUs, fp32 on CPU.

    python run_clm.py
"""
import json
import math
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from transformers import ModelOutput, Trainer, TrainingArguments, set_seed

BLOCK_SIZE = 32
VOCAB = 96
OUTPUT_DIR = os.environ.get("OUTPUT_DIR", "clm-out")


class TinyCausalLM(nn.Module):
    def __init__(self, vocab_size=VOCAB, d_model=64, n_layer=2, n_head=4, block_size=BLOCK_SIZE):
        super().__init__()
        self.wte = nn.Embedding(vocab_size, d_model)
        self.wpe = nn.Embedding(block_size, d_model)
        layer = nn.TransformerEncoderLayer(d_model, n_head, 4 * d_model, dropout=0.0, activation="gelu",
                                           batch_first=True, norm_first=True)
        self.h = nn.TransformerEncoder(layer, n_layer, enable_nested_tensor=False)
        self.ln_f = nn.LayerNorm(d_model)
        self.lm_head = nn.Linear(d_model, vocab_size, bias=False)
        self.lm_head.weight = self.wte.weight
        self.register_buffer("causal_mask", nn.Transformer.generate_square_subsequent_mask(block_size), persistent=False)
        self.apply(self._init_weights)

    def _init_weights(self, module):
        # same scheme as GPT-2 / HF PreTrainedModel._init_weights
        if isinstance(module, (nn.Linear, nn.Embedding)):
            module.weight.data.normal_(mean=0.0, std=0.02)
            if isinstance(module, nn.Linear) and module.bias is not None:
                module.bias.data.zero_()
        elif isinstance(module, nn.LayerNorm):
            module.bias.data.zero_()
            module.weight.data.fill_(1.0)

    def forward(self, input_ids, labels=None):
        T = input_ids.size(1)
        x = self.wte(input_ids) + self.wpe(torch.arange(T, device=input_ids.device))
        x = self.h(x, mask=self.causal_mask[:T, :T], is_causal=True)
        logits = self.lm_head(self.ln_f(x))
        loss = None
        if labels is not None:
            # Shift so that tokens < n predict n
            shift_logits = logits[..., :-1, :].contiguous()
            shift_labels = labels[..., 1:].contiguous()
            loss = F.cross_entropy(shift_logits.view(-1, shift_logits.size(-1)).float(), shift_labels.view(-1))
        return ModelOutput(loss=loss, logits=logits)


def group_texts(token_ids, block_size):
    total_length = (len(token_ids) // block_size) * block_size
    blocks = token_ids[:total_length].reshape(-1, block_size)
    return [{"input_ids": torch.from_numpy(b.copy()), "labels": torch.from_numpy(b.copy())} for b in blocks]


def synthetic_corpus(n_tokens, seed):
    # a couple of "grammar rules": token t is usually followed by (3 * t + 1) % VOCAB
    rng = np.random.default_rng(seed)
    out = np.empty(n_tokens, dtype=np.int64)
    out[0] = 0
    for i in range(1, n_tokens):
        out[i] = (3 * out[i - 1] + 1) % VOCAB if rng.random() < 0.85 else rng.integers(0, VOCAB)
    return out


def main():
    use_cuda = torch.cuda.is_available()
    bf16_ok = use_cuda and torch.cuda.is_bf16_supported()
    if use_cuda:
        major, minor = torch.cuda.get_device_capability()
        print(f"GPU: {torch.cuda.get_device_name()} (sm_{major}{minor}), bf16 supported: {bf16_ok}")

    training_args = TrainingArguments(
        output_dir=OUTPUT_DIR,
        do_train=True,
        do_eval=True,
        per_device_train_batch_size=16,
        per_device_eval_batch_size=32,
        learning_rate=2e-3,
        weight_decay=0.01,
        num_train_epochs=2,
        warmup_ratio=0.1,
        logging_steps=5,
        save_strategy="steps",
        save_steps=20,
        seed=1234,
        bf16=bf16_ok,
        fp16=use_cuda and not bf16_ok,
        tf32=True if bf16_ok else None,
        report_to="none",
    )
    set_seed(training_args.seed)

    train_dataset = group_texts(synthetic_corpus(8192, seed=0), BLOCK_SIZE)
    eval_dataset = group_texts(synthetic_corpus(2048, seed=1), BLOCK_SIZE)
    model = TinyCausalLM()
    n_params = sum(p.numel() for p in model.parameters())
    print(f"Training new model from scratch - Total size={n_params / 2**20:.2f}M params")

    trainer = Trainer(model=model, args=training_args, train_dataset=train_dataset, eval_dataset=eval_dataset)
    train_result = trainer.train()
    trainer.save_model()

    metrics = trainer.evaluate()
    try:
        perplexity = math.exp(metrics["eval_loss"])
    except OverflowError:
        perplexity = float("inf")
    metrics["perplexity"] = perplexity
    print(metrics)

    if use_cuda:
        print(f"max memory allocated: {torch.cuda.max_memory_allocated() / 2**20:.1f} MiB")
        torch.cuda.empty_cache()

    print("RESULT " + json.dumps({
        "train_loss": round(train_result.training_loss, 5),
        "eval_loss": round(metrics["eval_loss"], 5),
        "perplexity": round(perplexity, 4),
        "global_step": train_result.global_step,
    }))


if __name__ == "__main__":
    main()
