"""
A very small stand-in for the parts of `transformers` that the example scripts
in this folder use: TrainingArguments, HfArgumentParser, Trainer, set_seed,
get_linear_schedule_with_warmup and a ModelOutput-like dict.

It mimics the real library's behaviour where it matters for device handling:
  * `--fp16` on a machine without CUDA raises the same ValueError as HF,
  * `--bf16` without CUDA (and without `--use_cpu`) raises "Your setup doesn't support bf16/gpu.",
  * `--tf32` without an Ampere GPU raises,
  * the training device is cuda:0 when CUDA is available and `use_cpu` is not set,
  * fp16 uses torch.amp.autocast("cuda", float16) + GradScaler, bf16 uses autocast(bfloat16).
"""
import argparse
import dataclasses
import json
import math
import os
import random
import sys
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset

__version__ = "0.0.1-mini"


def set_seed(seed: int):
    """Helper function for reproducible behavior to set the seed in `random`, `numpy` and `torch`."""
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


def is_torch_bf16_gpu_available():
    return torch.cuda.is_available() and torch.cuda.is_bf16_supported()


def is_torch_tf32_available():
    if not torch.cuda.is_available() or torch.version.cuda is None:
        return False
    return torch.cuda.get_device_properties(torch.cuda.current_device()).major >= 8


class ModelOutput(OrderedDict):
    """dict with attribute access, like transformers.utils.ModelOutput"""

    def __getattr__(self, item):
        try:
            return self[item]
        except KeyError:
            raise AttributeError(item)

    def to_tuple(self):
        return tuple(self[k] for k in self.keys())


@dataclass
class TrainingArguments:
    output_dir: str = field(metadata={"help": "The output directory where the model predictions and checkpoints will be written."})
    overwrite_output_dir: bool = field(default=False)
    do_train: bool = field(default=False, metadata={"help": "Whether to run training."})
    do_eval: bool = field(default=False, metadata={"help": "Whether to run eval on the dev set."})
    eval_strategy: str = field(default="no")
    per_device_train_batch_size: int = field(default=8)
    per_device_eval_batch_size: int = field(default=8)
    gradient_accumulation_steps: int = field(default=1)
    learning_rate: float = field(default=5e-5)
    weight_decay: float = field(default=0.0)
    adam_beta1: float = field(default=0.9)
    adam_beta2: float = field(default=0.999)
    adam_epsilon: float = field(default=1e-8)
    max_grad_norm: float = field(default=1.0)
    num_train_epochs: float = field(default=3.0)
    max_steps: int = field(default=-1)
    warmup_ratio: float = field(default=0.0)
    warmup_steps: int = field(default=0)
    logging_steps: int = field(default=500)
    save_strategy: str = field(default="steps")
    save_steps: int = field(default=500)
    save_total_limit: Optional[int] = field(default=None)
    seed: int = field(default=42)
    use_cpu: bool = field(default=False, metadata={"help": "Whether or not to use cpu. If set to False, we will use cuda or mps device if available."})
    no_cuda: bool = field(default=False, metadata={"help": "This argument is deprecated. It will be removed in version 5.0 of Transformers."})
    fp16: bool = field(default=False, metadata={"help": "Whether to use fp16 (mixed) precision instead of 32-bit"})
    bf16: bool = field(default=False, metadata={"help": "Whether to use bf16 (mixed) precision instead of 32-bit."})
    tf32: Optional[bool] = field(default=None, metadata={"help": "Whether to enable tf32 mode, available in Ampere and newer GPU architectures."})
    dataloader_pin_memory: bool = field(default=True)
    dataloader_num_workers: int = field(default=0)
    report_to: str = field(default="none")
    local_rank: int = field(default=-1)
    disable_tqdm: bool = field(default=True)

    def __post_init__(self):
        if self.no_cuda:
            print("`no_cuda` is deprecated and will be removed in version 5.0 of Transformers. Use `use_cpu` instead")
            self.use_cpu = self.no_cuda
        if self.fp16 and self.bf16:
            raise ValueError("At most one of fp16 and bf16 can be True, but not both")

        if self.bf16:
            if not self.use_cpu and not is_torch_bf16_gpu_available():
                # gpu
                raise ValueError("Your setup doesn't support bf16/gpu.")

        if self.fp16 and self.device.type != "cuda":
            raise ValueError(
                "FP16 Mixed precision training with AMP or APEX (`--fp16`) and FP16 half precision evaluation"
                " (`--fp16_full_eval`) can only be used on CUDA or MLU devices or NPU devices or certain XPU devices (with IPEX)."
            )

        if self.tf32 is not None:
            if self.tf32:
                if is_torch_tf32_available():
                    torch.backends.cuda.matmul.allow_tf32 = True
                    torch.backends.cudnn.allow_tf32 = True
                else:
                    raise ValueError("--tf32 requires Ampere or a newer GPU arch, cuda>=11 and torch>=1.7")
            else:
                if is_torch_tf32_available():
                    torch.backends.cuda.matmul.allow_tf32 = False
                    torch.backends.cudnn.allow_tf32 = False

    @property
    def device(self) -> torch.device:
        if self.use_cpu or not torch.cuda.is_available():
            return torch.device("cpu")
        if self.local_rank != -1:
            return torch.device("cuda", self.local_rank)
        return torch.device("cuda:0")

    @property
    def n_gpu(self) -> int:
        return 0 if self.device.type == "cpu" else 1

    def to_dict(self):
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}


def string_to_bool(v):
    if isinstance(v, bool):
        return v
    if v.lower() in ("yes", "true", "t", "y", "1"):
        return True
    elif v.lower() in ("no", "false", "f", "n", "0"):
        return False
    raise argparse.ArgumentTypeError(f"Truthy value expected: got {v} but expected one of yes/no, true/false, t/f, y/n, 1/0 (case insensitive).")


class HfArgumentParser(argparse.ArgumentParser):
    """argparse over dataclass fields, `--flag` or `--flag True` for booleans."""

    def __init__(self, dataclass_types, **kwargs):
        super().__init__(**kwargs)
        if dataclasses.is_dataclass(dataclass_types):
            dataclass_types = [dataclass_types]
        self.dataclass_types = list(dataclass_types)
        for dtype in self.dataclass_types:
            for f in dataclasses.fields(dtype):
                self._add_field(f)

    def _add_field(self, f):
        kwargs = {"help": f.metadata.get("help")}
        origin = f.type
        if isinstance(origin, str):
            origin = eval(origin, sys.modules[__name__].__dict__, {"Optional": Optional, "List": List})
        if origin in (bool, Optional[bool]):
            kwargs.update(type=string_to_bool, nargs="?", const=True)
        elif origin in (int, Optional[int]):
            kwargs["type"] = int
        elif origin in (float, Optional[float]):
            kwargs["type"] = float
        else:
            kwargs["type"] = str
        if f.default is not dataclasses.MISSING:
            kwargs["default"] = f.default
        elif f.default_factory is not dataclasses.MISSING:
            kwargs["default"] = f.default_factory()
        else:
            kwargs["required"] = True
        self.add_argument(f"--{f.name}", **kwargs)

    def parse_args_into_dataclasses(self, args=None):
        namespace = self.parse_args(args=args)
        outputs = []
        for dtype in self.dataclass_types:
            keys = {f.name for f in dataclasses.fields(dtype) if f.init}
            inputs = {k: v for k, v in vars(namespace).items() if k in keys}
            outputs.append(dtype(**inputs))
        return tuple(outputs)


def get_linear_schedule_with_warmup(optimizer, num_warmup_steps, num_training_steps, last_epoch=-1):
    def lr_lambda(current_step: int):
        if current_step < num_warmup_steps:
            return float(current_step) / float(max(1, num_warmup_steps))
        return max(0.0, float(num_training_steps - current_step) / float(max(1, num_training_steps - num_warmup_steps)))

    return torch.optim.lr_scheduler.LambdaLR(optimizer, lr_lambda, last_epoch)


def default_data_collator(features: List[Dict[str, Any]]) -> Dict[str, torch.Tensor]:
    batch = {}
    for k in features[0].keys():
        v = features[0][k]
        if isinstance(v, torch.Tensor):
            batch[k] = torch.stack([f[k] for f in features])
        else:
            batch[k] = torch.tensor([f[k] for f in features])
    return batch


@dataclass
class TrainOutput:
    global_step: int
    training_loss: float
    metrics: Dict[str, float]


@dataclass
class EvalPrediction:
    predictions: np.ndarray
    label_ids: np.ndarray


class Trainer:
    def __init__(self, model=None, args: TrainingArguments = None, data_collator: Optional[Callable] = None,
                 train_dataset: Optional[Dataset] = None, eval_dataset: Optional[Dataset] = None,
                 compute_metrics: Optional[Callable[[EvalPrediction], Dict]] = None):
        self.args = args
        set_seed(self.args.seed)
        self.model = model
        self.data_collator = data_collator if data_collator is not None else default_data_collator
        self.train_dataset = train_dataset
        self.eval_dataset = eval_dataset
        self.compute_metrics = compute_metrics
        self.state = {"global_step": 0, "log_history": []}
        # place the model on the device (HF does this unless model parallel / deepspeed)
        self.model = self.model.to(args.device)
        self.use_amp = args.fp16 or args.bf16
        self.amp_dtype = torch.float16 if args.fp16 else torch.bfloat16
        self.scaler = torch.amp.GradScaler("cuda") if args.fp16 else None

    # ------------------------------------------------------------------ data
    def get_train_dataloader(self):
        g = torch.Generator()
        g.manual_seed(self.args.seed)
        return DataLoader(self.train_dataset, batch_size=self.args.per_device_train_batch_size, shuffle=True,
                          collate_fn=self.data_collator, generator=g, drop_last=False,
                          num_workers=self.args.dataloader_num_workers,
                          pin_memory=self.args.dataloader_pin_memory and self.args.device.type == "cuda")

    def get_eval_dataloader(self, eval_dataset=None):
        ds = eval_dataset if eval_dataset is not None else self.eval_dataset
        return DataLoader(ds, batch_size=self.args.per_device_eval_batch_size, shuffle=False,
                          collate_fn=self.data_collator,
                          pin_memory=self.args.dataloader_pin_memory and self.args.device.type == "cuda")

    def _prepare_inputs(self, inputs):
        return {k: v.to(self.args.device, non_blocking=True) for k, v in inputs.items()}

    def autocast_smart_context_manager(self):
        return torch.amp.autocast(self.args.device.type, dtype=self.amp_dtype, enabled=self.use_amp)

    # ------------------------------------------------------------------ train
    def compute_loss(self, model, inputs):
        outputs = model(**inputs)
        return outputs["loss"] if isinstance(outputs, dict) else outputs[0]

    def create_optimizer_and_scheduler(self, num_training_steps):
        decay, no_decay = [], []
        for n, p in self.model.named_parameters():
            if not p.requires_grad:
                continue
            (no_decay if (p.ndim < 2 or "norm" in n.lower()) else decay).append(p)
        self.optimizer = torch.optim.AdamW(
            [{"params": decay, "weight_decay": self.args.weight_decay}, {"params": no_decay, "weight_decay": 0.0}],
            lr=self.args.learning_rate, betas=(self.args.adam_beta1, self.args.adam_beta2), eps=self.args.adam_epsilon)
        warmup = self.args.warmup_steps or math.ceil(num_training_steps * self.args.warmup_ratio)
        self.lr_scheduler = get_linear_schedule_with_warmup(self.optimizer, warmup, num_training_steps)

    def train(self):
        args = self.args
        train_dataloader = self.get_train_dataloader()
        steps_per_epoch = max(len(train_dataloader) // args.gradient_accumulation_steps, 1)
        if args.max_steps > 0:
            max_steps = args.max_steps
            num_train_epochs = math.ceil(max_steps / steps_per_epoch)
        else:
            num_train_epochs = math.ceil(args.num_train_epochs)
            max_steps = steps_per_epoch * num_train_epochs
        self.create_optimizer_and_scheduler(max_steps)

        print("***** Running training *****")
        print(f"  Num examples = {len(self.train_dataset)}")
        print(f"  Num Epochs = {num_train_epochs}")
        print(f"  Instantaneous batch size per device = {args.per_device_train_batch_size}")
        print(f"  Total optimization steps = {max_steps}")
        print(f"  Device = {args.device}, fp16 = {args.fp16}, bf16 = {args.bf16}")

        self.model.train()
        tr_loss_sum, logged_loss, n_logged = 0.0, 0.0, 0
        global_step = 0
        start = time.time()
        for epoch in range(num_train_epochs):
            for step, inputs in enumerate(train_dataloader):
                inputs = self._prepare_inputs(inputs)
                with self.autocast_smart_context_manager():
                    loss = self.compute_loss(self.model, inputs)
                loss = loss / args.gradient_accumulation_steps
                if self.scaler is not None:
                    self.scaler.scale(loss).backward()
                else:
                    loss.backward()
                tr_loss_sum += loss.item()
                logged_loss += loss.item()
                if (step + 1) % args.gradient_accumulation_steps == 0:
                    if self.scaler is not None:
                        self.scaler.unscale_(self.optimizer)
                    torch.nn.utils.clip_grad_norm_(self.model.parameters(), args.max_grad_norm)
                    if self.scaler is not None:
                        self.scaler.step(self.optimizer)
                        self.scaler.update()
                    else:
                        self.optimizer.step()
                    self.lr_scheduler.step()
                    self.optimizer.zero_grad(set_to_none=True)
                    global_step += 1
                    n_logged += 1
                    if global_step % args.logging_steps == 0:
                        entry = {"loss": round(logged_loss / n_logged, 4),
                                 "learning_rate": self.lr_scheduler.get_last_lr()[0],
                                 "epoch": round(epoch + (step + 1) / len(train_dataloader), 2), "step": global_step}
                        self.state["log_history"].append(entry)
                        print(entry)
                        logged_loss, n_logged = 0.0, 0
                    if args.save_strategy == "steps" and global_step % args.save_steps == 0:
                        self._save_checkpoint(global_step)
                if global_step >= max_steps:
                    break
            if args.eval_strategy == "epoch" and self.eval_dataset is not None:
                self.evaluate()
            if global_step >= max_steps:
                break
        self.state["global_step"] = global_step
        runtime = time.time() - start
        train_loss = tr_loss_sum * args.gradient_accumulation_steps / max(1, global_step * args.gradient_accumulation_steps)
        metrics = {"train_runtime": round(runtime, 4), "train_loss": train_loss, "epoch": float(num_train_epochs)}
        print(metrics)
        return TrainOutput(global_step, train_loss, metrics)

    def _save_checkpoint(self, step):
        out = os.path.join(self.args.output_dir, f"checkpoint-{step}")
        self.save_model(out)
        torch.save(self.optimizer.state_dict(), os.path.join(out, "optimizer.pt"))
        with open(os.path.join(out, "trainer_state.json"), "w") as f:
            json.dump({"global_step": step, "log_history": self.state["log_history"]}, f, indent=2)

    def save_model(self, output_dir: Optional[str] = None):
        output_dir = output_dir if output_dir is not None else self.args.output_dir
        os.makedirs(output_dir, exist_ok=True)
        torch.save(self.model.state_dict(), os.path.join(output_dir, "pytorch_model.bin"))
        with open(os.path.join(output_dir, "training_args.json"), "w") as f:
            json.dump(self.args.to_dict(), f, indent=2, default=str)

    # ------------------------------------------------------------------ eval
    @torch.no_grad()
    def predict(self, dataset):
        self.model.eval()
        losses, preds, labels = [], [], []
        for inputs in self.get_eval_dataloader(dataset):
            inputs = self._prepare_inputs(inputs)
            with self.autocast_smart_context_manager():
                outputs = self.model(**inputs)
            if "loss" in outputs and outputs["loss"] is not None:
                losses.append(outputs["loss"].float().item() * inputs["labels"].shape[0])
            preds.append(outputs["logits"].float().cpu().numpy())
            labels.append(inputs["labels"].cpu().numpy())
        self.model.train()
        n = sum(l.shape[0] for l in labels)
        return np.concatenate(preds), np.concatenate(labels), (sum(losses) / n if losses else None)

    def evaluate(self, eval_dataset=None, metric_key_prefix="eval"):
        ds = eval_dataset if eval_dataset is not None else self.eval_dataset
        preds, labels, loss = self.predict(ds)
        metrics = {}
        if self.compute_metrics is not None:
            metrics.update(self.compute_metrics(EvalPrediction(predictions=preds, label_ids=labels)))
        if loss is not None:
            metrics["loss"] = loss
        metrics = {f"{metric_key_prefix}_{k}": v for k, v in metrics.items()}
        self.state["log_history"].append(metrics)
        print(metrics)
        return metrics
