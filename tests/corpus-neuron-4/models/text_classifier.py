"""Review sentiment classifier: encoder + attention pooling.

Training recipe: see train/hf_finetune.py. The data pipeline below builds
batches for the model; pad-to-longest is used for speed on GPUs.
"""
import argparse
from typing import Dict, List

import torch
from torch import nn
from torch.nn.utils.rnn import pad_sequence
from torch.utils.data import DataLoader, Dataset
from transformers import AutoModel, AutoTokenizer


class ReviewDataset(Dataset):
    def __init__(self, records: List[Dict], tokenizer, max_length: int = 256):
        self.records = records
        self.tokenizer = tokenizer
        self.max_length = max_length

    def __len__(self) -> int:
        return len(self.records)

    def __getitem__(self, idx: int) -> Dict:
        rec = self.records[idx]
        ids = self.tokenizer(rec["text"], truncation=True, max_length=self.max_length)["input_ids"]  # ok
        return {"input_ids": ids, "label": rec["label"]}


def collate_batch(batch: List[Dict], pad_id: int) -> Dict[str, torch.Tensor]:
    ids = [torch.tensor(item["input_ids"], dtype=torch.long) for item in batch]
    input_ids = pad_sequence(ids, batch_first=True, padding_value=pad_id)  # expect: compilation
    attention_mask = (input_ids != pad_id).long()  # ok
    labels = torch.tensor([item["label"] for item in batch])
    return {"input_ids": input_ids, "attention_mask": attention_mask, "labels": labels}


def make_text_collate(tokenizer, max_length: int = 256):
    def collate(batch: List[Dict]) -> Dict[str, torch.Tensor]:
        enc = tokenizer(
            [item["text"] for item in batch],
            padding=True,  # expect: compilation
            truncation=True,
            max_length=max_length,
            return_tensors="pt",
        )
        enc["labels"] = torch.tensor([item["label"] for item in batch])
        return enc

    return collate


def make_fixed_collate(tokenizer, max_length: int = 256):
    def collate(batch: List[Dict]) -> Dict[str, torch.Tensor]:
        enc = tokenizer(
            [item["text"] for item in batch],
            padding="max_length",  # ok
            truncation=True,
            max_length=max_length,
            return_tensors="pt",
        )
        enc["labels"] = torch.tensor([item["label"] for item in batch])
        return enc

    return collate


def build_train_loader(records: List[Dict], tokenizer, batch_size: int = 32) -> DataLoader:
    dataset = ReviewDataset(records, tokenizer)
    return DataLoader(
        dataset,
        batch_size=batch_size,
        shuffle=True,
        collate_fn=lambda b: collate_batch(b, tokenizer.pad_token_id),
    )


class AttentionPool(nn.Module):
    def __init__(self, hidden: int):
        super().__init__()
        self.proj = nn.Linear(hidden, 1)

    def forward(self, hidden: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        scores = self.proj(hidden).squeeze(-1)
        scores = scores.masked_fill(attention_mask == 0, torch.finfo(scores.dtype).min)  # ok
        weights = scores.softmax(-1)
        return torch.einsum("bt,btd->bd", weights, hidden)


class ReviewClassifier(nn.Module):
    def __init__(self, encoder_name: str, num_labels: int = 2, dropout: float = 0.1):
        super().__init__()
        self.encoder = AutoModel.from_pretrained(encoder_name)
        hidden = self.encoder.config.hidden_size
        self.token_scorer = nn.Linear(hidden, 1)
        self.pool = AttentionPool(hidden)
        self.dropout = nn.Dropout(dropout)
        self.head = nn.Linear(hidden, num_labels)

    def forward(self, input_ids, attention_mask, labels=None):
        hidden = self.encoder(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
        # legacy additive mask kept for checkpoint compatibility
        token_scores = self.token_scorer(hidden).squeeze(-1)
        token_scores = token_scores + (1.0 - attention_mask.to(token_scores.dtype)) * torch.finfo(torch.float16).min  # expect: precision
        pooled = self.pool(hidden, attention_mask)
        logits = self.head(self.dropout(pooled))
        out = {"logits": logits, "token_scores": token_scores}
        if labels is not None:
            loss = nn.functional.cross_entropy(logits, labels)
            # auxiliary loss only over real (non-padding) tokens
            per_token = nn.functional.softplus(-token_scores)
            active = torch.masked_select(per_token, attention_mask.bool())  # expect: compilation
            out["loss"] = loss + 0.01 * active.mean()
        return out


@torch.no_grad()
def predict(model: nn.Module, tokenizer, texts: List[str]) -> List[int]:
    enc = tokenizer(texts, padding="longest", truncation=True, return_tensors="pt")  # expect: compilation
    logits = model(enc["input_ids"], enc["attention_mask"])["logits"]
    return logits.argmax(-1).tolist()


def token_length_report(tokenizer, texts: List[str]) -> Dict[str, float]:
    lengths = [len(ids) for ids in tokenizer(texts, padding=False)["input_ids"]]  # ok
    return {"mean": sum(lengths) / len(lengths), "max": float(max(lengths))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--encoder", default="distilroberta-base")
    parser.add_argument("--text", nargs="+", required=True)
    args = parser.parse_args()
    tokenizer = AutoTokenizer.from_pretrained(args.encoder)
    model = ReviewClassifier(args.encoder).eval()
    print(predict(model, tokenizer, args.text))


if __name__ == "__main__":
    main()
