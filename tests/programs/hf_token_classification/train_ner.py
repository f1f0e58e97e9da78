# Token classification (NER) fine-tuning on a synthetic tagging task.
# Meant for a single GPU box:  CUDA_VISIBLE_DEVICES=0 python train_ner.py
import os

os.environ.setdefault("CUDA_VISIBLE_DEVICES", "0")
os.environ["TOKENIZERS_PARALLELISM"] = "false"

import json
import numpy as np
import torch
import torch.nn as nn

from transformers import ModelOutput, Trainer, TrainingArguments, set_seed

LABELS = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC"]
label2id = {l: i for i, l in enumerate(LABELS)}
id2label = {i: l for l, i in label2id.items()}
MAX_LEN = 20
VOCAB = 150

config = {
    "hidden_size": 64,
    "num_layers": 1,
    "dropout": 0.1,
    "lr": 1e-2,
    "epochs": 8,
    "batch_size": 32,
    "seed": 17,
}


class BiLSTMTagger(nn.Module):
    def __init__(self, vocab_size, hidden, num_layers, num_labels, dropout):
        super().__init__()
        self.emb = nn.Embedding(vocab_size, hidden, padding_idx=0)
        self.lstm = nn.LSTM(hidden, hidden // 2, num_layers=num_layers, batch_first=True, bidirectional=True)
        self.dropout = nn.Dropout(dropout)
        self.classifier = nn.Linear(hidden, num_labels)

    def forward(self, input_ids, attention_mask=None, labels=None):
        h, _ = self.lstm(self.emb(input_ids))
        logits = self.classifier(self.dropout(h))
        loss = None
        if labels is not None:
            loss = nn.functional.cross_entropy(logits.view(-1, logits.size(-1)).float(), labels.view(-1), ignore_index=-100)
        return ModelOutput(loss=loss, logits=logits)


def make_split(n, seed):
    """names are ids 10..29 (PER), places 30..49 (LOC); a name/place may span two tokens"""
    rng = np.random.default_rng(seed)
    rows = []
    for _ in range(n):
        length = int(rng.integers(8, MAX_LEN))
        ids = rng.integers(50, VOCAB, size=length)
        tags = np.zeros(length, dtype=np.int64)
        for _ in range(int(rng.integers(1, 3))):
            start = int(rng.integers(0, length - 2))
            kind = int(rng.integers(0, 2))
            span = int(rng.integers(1, 3))
            base = 10 if kind == 0 else 30
            ids[start:start + span] = rng.integers(base, base + 20, size=span)
            tags[start] = label2id["B-PER"] if kind == 0 else label2id["B-LOC"]
            tags[start + 1:start + span] = label2id["I-PER"] if kind == 0 else label2id["I-LOC"]
        input_ids = np.zeros(MAX_LEN, dtype=np.int64)
        labels = np.full(MAX_LEN, -100, dtype=np.int64)
        input_ids[:length] = ids
        labels[:length] = tags
        rows.append({"input_ids": torch.from_numpy(input_ids),
                     "attention_mask": torch.from_numpy((input_ids != 0).astype(np.int64)),
                     "labels": torch.from_numpy(labels)})
    return rows


def compute_metrics(p):
    preds = np.argmax(p.predictions, axis=2)
    mask = p.label_ids != -100
    acc = float((preds[mask] == p.label_ids[mask]).mean())
    ent = mask & (p.label_ids != 0)
    ent_recall = float((preds[ent] == p.label_ids[ent]).mean())
    return {"accuracy": acc, "entity_recall": ent_recall}


def main():
    set_seed(config["seed"])
    torch.backends.cuda.matmul.allow_tf32 = True

    args = TrainingArguments(
        output_dir="ner-model",
        per_device_train_batch_size=config["batch_size"],
        per_device_eval_batch_size=64,
        learning_rate=config["lr"],
        num_train_epochs=config["epochs"],
        weight_decay=0.0,
        eval_strategy="epoch",
        save_strategy="no",
        logging_steps=10,
        fp16=True,
        dataloader_pin_memory=True,
        seed=config["seed"],
    )
    print(f"training on {args.device} ({torch.cuda.get_device_name(args.device)})")

    model = BiLSTMTagger(VOCAB, config["hidden_size"], config["num_layers"], len(LABELS), config["dropout"])
    trainer = Trainer(model=model, args=args, train_dataset=make_split(640, 0), eval_dataset=make_split(160, 1),
                      compute_metrics=compute_metrics)
    out = trainer.train()
    metrics = trainer.evaluate()
    trainer.save_model()
    torch.cuda.empty_cache()
    print("RESULT " + json.dumps({"train_loss": round(out.training_loss, 5),
                                  "eval_loss": round(metrics["eval_loss"], 5),
                                  "eval_accuracy": round(metrics["eval_accuracy"], 5),
                                  "eval_entity_recall": round(metrics["eval_entity_recall"], 5)}))


if __name__ == "__main__":
    main()
