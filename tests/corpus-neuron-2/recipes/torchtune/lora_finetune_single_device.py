# Copyright (c) Meta Platforms, Inc. and affiliates.
# All rights reserved.
#
# This source code is licensed under the BSD-style license found in the
# LICENSE file in the root directory of this source tree.

import sys
import time
from functools import partial
from typing import Any, Dict, List, Optional

import torch
from omegaconf import DictConfig, ListConfig
from torch import nn
from torch.nn.utils.rnn import pad_sequence
from torch.optim import Optimizer
from torch.utils.data import DataLoader, DistributedSampler
from torchtune import config, modules, training, utils
from torchtune.modules.peft import get_adapter_params, set_trainable_params
from torchtune.recipe_interfaces import FTRecipeInterface
from tqdm import tqdm

log = utils.get_logger("DEBUG")

CROSS_ENTROPY_IGNORE_IDX = -100


def padded_collate_sft(
    batch: List[Dict[str, List[int]]],
    padding_idx: int = 0,
    ignore_idx: int = CROSS_ENTROPY_IGNORE_IDX,
) -> Dict[str, torch.Tensor]:
    """Pad a batch of sequences to the longest sequence length in the batch."""
    input_ids = pad_sequence(
        [torch.tensor(x["tokens"]) for x in batch],
        batch_first=True,
        padding_value=padding_idx,
    )  # expect-any(tt-collate): compilation
    labels = pad_sequence(
        [torch.tensor(x["labels"]) for x in batch],
        batch_first=True,
        padding_value=ignore_idx,
    )  # expect-any(tt-collate): compilation
    return {"tokens": input_ids.long(), "labels": labels.long()}


class LoRAFinetuneRecipeSingleDevice(FTRecipeInterface):
    """LoRA finetuning recipe for dense transformer-based LLMs such as Llama2."""

    def __init__(self, cfg: DictConfig) -> None:
        self._device = utils.get_device(device=cfg.device)
        self._dtype = training.get_dtype(cfg.dtype, device=self._device)
        if self._dtype == torch.float16:
            raise ValueError(
                "full fp16 training is not supported with this recipe. Please use bf16 or fp32 instead."
            )  # ok
        self._log_every_n_steps = cfg.get("log_every_n_steps", 1)
        self._log_peak_memory_stats = cfg.get("log_peak_memory_stats", False)
        self._compile = cfg.get("compile", False)
        self._compile_mode = cfg.get("compile_mode", "max-autotune-no-cudagraphs")  # expect-any(tt-compile): compilation
        self._enable_fp8 = cfg.get("enable_fp8_training", False)
        self.seed = training.set_seed(seed=cfg.seed)
        self.epochs_run = 0
        self.total_epochs = cfg.epochs
        self.max_steps_per_epoch = cfg.max_steps_per_epoch
        self.global_step = 0
        self._gradient_accumulation_steps = cfg.gradient_accumulation_steps

    def setup(self, cfg: DictConfig) -> None:
        self._model = self._setup_model(
            cfg_model=cfg.model,
            enable_activation_checkpointing=cfg.enable_activation_checkpointing,
            compile_model=self._compile,
        )
        self._tokenizer = config.instantiate(cfg.tokenizer)
        self._optimizer = self._setup_optimizer(cfg_optimizer=cfg.optimizer)
        self._loss_fn = config.instantiate(cfg.loss)
        self._sampler, self._dataloader = self._setup_data(
            cfg_dataset=cfg.dataset,
            shuffle=cfg.shuffle,
            batch_size=cfg.batch_size,
        )

    def _setup_model(self, cfg_model: DictConfig, enable_activation_checkpointing: bool, compile_model: bool) -> nn.Module:
        with training.set_default_dtype(self._dtype), self._device:
            model = config.instantiate(cfg_model)

        set_trainable_params(model, get_adapter_params(model))
        if enable_activation_checkpointing:
            training.set_activation_checkpointing(model, auto_wrap_policy={modules.TransformerSelfAttentionLayer})

        if self._enable_fp8:
            model = self._convert_to_float8(model)

        if compile_model:
            log.info("Compiling model with torch.compile...")  # ok
            torch._dynamo.config.automatic_dynamic_shapes = True  # expect: compilation
            model = torch.compile(model, mode=self._compile_mode)  # expect-any(tt-compile): compilation

        if self._device.type == "cuda" and self._log_peak_memory_stats:  # may: device
            memory_stats = training.get_memory_stats(device=self._device)
            training.log_memory_stats(memory_stats)
        return model

    def _convert_to_float8(self, model: nn.Module) -> nn.Module:
        from torchao.float8 import Float8LinearConfig, convert_to_float8_training  # expect-any(tt-fp8): kernels

        if torch.cuda.get_device_capability() < (8, 9):  # expect-any(tt-fp8): kernels; may: device
            raise RuntimeError("Float8 training requires SM89 or later (H100, L4, L40S)")
        fp8_config = Float8LinearConfig.from_recipe_name("rowwise")
        convert_to_float8_training(
            model,
            config=fp8_config,
            module_filter_fn=lambda mod, fqn: fqn != "output",
        )  # expect-any(tt-fp8): kernels
        return model

    def _setup_optimizer(self, cfg_optimizer: DictConfig) -> Optimizer:
        optimizer = config.instantiate(cfg_optimizer, self._model.parameters())
        log.info("Optimizer and loss are initialized.")
        return optimizer

    def _setup_data(self, cfg_dataset: DictConfig, shuffle: bool, batch_size: int):
        ds = config.instantiate(cfg_dataset, self._tokenizer)
        sampler = DistributedSampler(ds, num_replicas=1, rank=0, shuffle=shuffle, seed=0)
        dataloader = DataLoader(
            dataset=ds,
            sampler=sampler,
            batch_size=batch_size,
            collate_fn=partial(
                padded_collate_sft,
                padding_idx=self._tokenizer.pad_id,
                ignore_idx=self._loss_fn.ignore_index,
            ),
            drop_last=True,
        )
        return sampler, dataloader

    def train(self) -> None:
        self._optimizer.zero_grad()
        t0 = time.perf_counter()
        running_loss = 0.0
        num_tokens = 0
        for curr_epoch in range(self.epochs_run, self.total_epochs):
            self._sampler.set_epoch(curr_epoch)
            pbar = tqdm(total=len(self._dataloader))
            for idx, batch in enumerate(self._dataloader):
                utils.batch_to_device(batch, self._device)
                current_num_tokens = (batch["labels"] != self._loss_fn.ignore_index).sum()
                num_tokens += current_num_tokens
                labels = batch.pop("labels")
                logits = self._model(batch["tokens"])
                labels = torch.hstack((labels[..., 1:], self.ignore_labels_cache[: labels.shape[0]]))
                loss = self._loss_fn(logits, labels) * current_num_tokens
                running_loss += loss
                loss.backward()

                if (idx + 1) % self._gradient_accumulation_steps == 0:
                    training.scale_grads(self._model, 1 / num_tokens)
                    self._optimizer.step()
                    self._optimizer.zero_grad(set_to_none=True)
                    self.global_step += 1
                    loss_to_log = running_loss.item() / num_tokens
                    pbar.update(1)
                    pbar.set_description(f"{curr_epoch + 1}|{self.global_step}|Loss: {loss_to_log}")
                    running_loss = 0
                    num_tokens = 0
                    t0 = time.perf_counter()


@config.parse
def recipe_main(cfg: DictConfig) -> None:
    recipe = LoRAFinetuneRecipeSingleDevice(cfg=cfg)
    recipe.setup(cfg=cfg)
    recipe.train()


if __name__ == "__main__":
    sys.exit(recipe_main())
