import copy
import json
import sys

import torch
from torch import nn
from transformers import AutoConfig, AutoModel, Trainer, TrainingArguments

DEFAULT_CONFIG = {
    "model": {"name": "bert-base-uncased", "num_labels": 3, "dropout": 0.1},
    "data": {"max_length": 256, "pad_to_multiple_of": 64},
    "trainer": {
        "output_dir": "runs/nli",
        "per_device_train_batch_size": 32,
        "learning_rate": 3e-5,
        "num_train_epochs": 2,
        "fp16": True,  # expect-any(nested_fp16): precision
        "ddp_backend": "nccl",  # expect-any(nested_ddp): distributed
        "torch_compile_backend": "inductor",  # expect-any(nested_compile): compilation
        "logging_steps": 50,
    },
}


class PairClassifier(nn.Module):
    def __init__(self, name, num_labels, dropout):
        super().__init__()
        self.encoder = AutoModel.from_pretrained(name)
        hidden = AutoConfig.from_pretrained(name).hidden_size
        self.drop = nn.Dropout(dropout)
        self.head = nn.Linear(hidden, num_labels)

    def forward(self, input_ids, attention_mask, labels=None):
        hidden = self.encoder(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
        # additive mask for a custom pooling attention, built in half precision
        neg = torch.finfo(torch.float16).min  # expect: precision
        scores = hidden.mean(-1).masked_fill(attention_mask == 0, neg)  # ok
        weights = scores.softmax(-1).unsqueeze(-1)
        pooled = (weights * hidden).sum(1)
        logits = self.head(self.drop(pooled))
        loss = None
        if labels is not None:
            loss = nn.functional.cross_entropy(logits, labels)
        return {"loss": loss, "logits": logits}


def main(overrides_path=None):
    cfg = copy.deepcopy(DEFAULT_CONFIG)
    if overrides_path:
        with open(overrides_path) as f:
            for section, values in json.load(f).items():
                cfg[section].update(values)

    trainer_cfg = cfg["trainer"]
    trainer_cfg["half_precision_backend"] = "auto"  # expect: precision
    trainer_cfg["bf16"] = False  # ok
    args = TrainingArguments(**trainer_cfg)  # expect-any(nested_fp16): precision; expect-any(nested_ddp): distributed; expect-any(nested_compile): compilation

    model = PairClassifier(**cfg["model"])
    dataset = torch.load("data/nli_encoded.pt")
    trainer = Trainer(model=model, args=args, train_dataset=dataset["train"], eval_dataset=dataset["dev"])
    trainer.train()


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None)
