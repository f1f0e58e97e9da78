import logging
import sys

import evaluate
import numpy as np
from datasets import load_dataset
from transformers import (
    AutoModelForSequenceClassification,
    AutoTokenizer,
    DataCollatorWithPadding,
    Trainer,
    TrainingArguments,
)

logger = logging.getLogger(__name__)
MODEL = "roberta-base"
MAX_LEN = 128


def main():
    raw = load_dataset("glue", "sst2")
    tokenizer = AutoTokenizer.from_pretrained(MODEL)

    def preprocess_function(examples):
        return tokenizer(examples["sentence"], padding="max_length", max_length=MAX_LEN, truncation=True)  # ok

    encoded = raw.map(preprocess_function, batched=True, desc="Running tokenizer on dataset")
    model = AutoModelForSequenceClassification.from_pretrained(MODEL, num_labels=2)
    metric = evaluate.load("accuracy")

    def compute_metrics(p):
        preds = np.argmax(p.predictions, axis=1)
        correct = preds == p.label_ids
        wrong_idx = np.nonzero(~correct)[0]  # ok
        logger.info("misclassified %d examples", len(wrong_idx))
        return metric.compute(predictions=preds, references=p.label_ids)

    training_args = TrainingArguments(
        output_dir="out/sst2",
        per_device_train_batch_size=32,
        per_device_eval_batch_size=64,
        learning_rate=2e-5,
        num_train_epochs=3,
        fp16=True,  # expect: precision
        half_precision_backend="cuda_amp",  # expect: precision
        tf32=True,  # may: precision
        torch_compile=True,  # may: compilation
        torch_compile_backend="inductor",  # expect: compilation
        torch_compile_mode="max-autotune",  # expect: compilation
        ddp_backend="nccl",  # expect: distributed
        dataloader_pin_memory=True,  # may: device
        eval_strategy="epoch",
        save_strategy="epoch",
        report_to="none",
    )

    trainer = Trainer(
        model=model,
        args=training_args,
        train_dataset=encoded["train"],
        eval_dataset=encoded["validation"],
        tokenizer=tokenizer,
        data_collator=DataCollatorWithPadding(tokenizer, padding="max_length", max_length=MAX_LEN),  # ok
        compute_metrics=compute_metrics,
    )
    trainer.train()
    trainer.evaluate()


if __name__ == "__main__":
    logging.basicConfig(stream=sys.stdout, level=logging.INFO)
    main()
