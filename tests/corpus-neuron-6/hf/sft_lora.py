"""QLoRA supervised fine-tuning with TRL + PEFT."""
import os

import torch
from datasets import load_dataset
from peft import LoraConfig, get_peft_model, prepare_model_for_kbit_training
from transformers import AutoModelForCausalLM, AutoTokenizer, BitsAndBytesConfig  # may: kernels, dependencies
from trl import SFTConfig, SFTTrainer

MODEL_ID = os.environ.get("MODEL_ID", "mistralai/Mistral-7B-v0.1")

BASE_ARGS = dict(
    output_dir="checkpoints/mistral-sft",
    num_train_epochs=1,
    per_device_train_batch_size=2,
    gradient_accumulation_steps=8,
    gradient_checkpointing=True,
    learning_rate=2e-4,
    lr_scheduler_type="cosine",
    logging_steps=10,
    max_seq_length=2048,
    packing=True,
    bf16=True,  # expect-any(sft_bf16): precision
    report_to="wandb",
)


def format_chat(batch):
    texts = [f"### Question:\n{q}\n### Answer:\n{a}" for q, a in zip(batch["question"], batch["answer"])]
    return {"text": texts}


def tokenize_for_eval(batch, tokenizer):
    return tokenizer(batch["text"], padding=True, truncation=True, max_length=2048)  # expect: compilation


def main():
    tokenizer = AutoTokenizer.from_pretrained(MODEL_ID)
    tokenizer.pad_token = tokenizer.eos_token

    bnb_config = BitsAndBytesConfig(  # may: kernels, dependencies
        load_in_4bit=True,
        bnb_4bit_quant_type="nf4",
        bnb_4bit_compute_dtype=torch.bfloat16,  # ok
    )
    model = AutoModelForCausalLM.from_pretrained(
        MODEL_ID,
        quantization_config=bnb_config,
        attn_implementation="flash_attention_2",  # may: kernels
        torch_dtype=torch.bfloat16,  # ok
    )
    model = prepare_model_for_kbit_training(model)
    model = get_peft_model(
        model,
        LoraConfig(r=16, lora_alpha=32, lora_dropout=0.05, target_modules=["q_proj", "v_proj"], task_type="CAUSAL_LM"),
    )

    ds = load_dataset("json", data_files="data/qa.jsonl", split="train")
    ds = ds.map(format_chat, batched=True, remove_columns=ds.column_names)
    eval_ds = ds.select(range(256)).map(tokenize_for_eval, batched=True, fn_kwargs={"tokenizer": tokenizer})

    args = dict(BASE_ARGS)
    args["optim"] = "paged_adamw_8bit"  # may: kernels
    args["tf32"] = True  # may: precision
    sft_config = SFTConfig(**args)  # expect-any(sft_bf16): precision

    trainer = SFTTrainer(
        model=model,
        args=sft_config,
        train_dataset=ds,
        eval_dataset=eval_ds,
        tokenizer=tokenizer,
    )
    trainer.train()
    trainer.save_model()


if __name__ == "__main__":
    main()
