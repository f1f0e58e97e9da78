"""
lightning: a small stand-in for the parts of `lightning` (`import lightning as L`)
used by the example scripts in this folder.

Behaves like the real thing where device handling matters:
  * accelerator="gpu"  without CUDA -> MisconfigurationException("No supported gpu backend found!")
  * accelerator="cuda" without CUDA -> MisconfigurationException("`CUDAAccelerator` can not run on your system ...")
  * precision 16 / "16" / "16-mixed" -> torch.autocast(float16) + GradScaler on CUDA (not supported on CPU)
  * precision "bf16-mixed"           -> torch.autocast(bfloat16) on the chosen device
  * strategy="ddp" with devices > 1  -> re-launches the script once per extra device (like Lightning's
    subprocess launcher, or uses the torchrun environment if present), NCCL on GPU / gloo on CPU,
    wraps the module in DistributedDataParallel and adds a DistributedSampler.
  * the LightningModule is moved to the root device before training.
"""
import atexit
import inspect
import os
import random
import socket
import subprocess
import sys
import time
from contextlib import nullcontext
from typing import Any, Dict, List, Optional, Union

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, DistributedSampler

__version__ = "2.4.0-mini"


class MisconfigurationException(Exception):
    pass


def seed_everything(seed: int = 0, workers: bool = False) -> int:
    print(f"Seed set to {seed}")
    os.environ["PL_GLOBAL_SEED"] = str(seed)
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)
    return seed


class AttributeDict(dict):
    def __getattr__(self, key):
        try:
            return self[key]
        except KeyError as e:
            raise AttributeError(key) from e

    def __setattr__(self, key, val):
        self[key] = val


class LightningModule(nn.Module):
    def __init__(self, *args, **kwargs):
        super().__init__()
        self._trainer = None
        self._hparams = AttributeDict()
        self._logged: Dict[str, List[float]] = {}

    # --------------------------------------------------------------- helpers
    def save_hyperparameters(self, *args, ignore=None):
        frame = inspect.currentframe().f_back
        init_args = {k: v for k, v in frame.f_locals.items()
                     if k not in ("self", "__class__") and not k.startswith("_")}
        for k in (ignore or []):
            init_args.pop(k, None)
        self._hparams.update(init_args)

    @property
    def hparams(self):
        return self._hparams

    @property
    def trainer(self):
        return self._trainer

    @property
    def device(self):
        try:
            return next(self.parameters()).device
        except StopIteration:
            return torch.device("cpu")

    @property
    def current_epoch(self):
        return self._trainer.current_epoch if self._trainer else 0

    @property
    def global_step(self):
        return self._trainer.global_step if self._trainer else 0

    @property
    def global_rank(self):
        return self._trainer.global_rank if self._trainer else 0

    def log(self, name, value, prog_bar=False, logger=True, on_step=None, on_epoch=None, sync_dist=False, batch_size=None):
        if isinstance(value, torch.Tensor):
            value = value.detach()
            if sync_dist and dist.is_available() and dist.is_initialized():
                value = value.clone().float()
                dist.all_reduce(value)
                value /= dist.get_world_size()
            value = value.float().item()
        self._logged.setdefault(name, []).append(float(value))

    def log_dict(self, dictionary, **kwargs):
        for k, v in dictionary.items():
            self.log(k, v, **kwargs)

    def print(self, *args, **kwargs):
        if self._trainer is None or self._trainer.is_global_zero:
            print(*args, **kwargs)

    # --------------------------------------------------------------- hooks
    def forward(self, *args, **kwargs):
        raise NotImplementedError

    def training_step(self, batch, batch_idx):
        raise NotImplementedError

    def validation_step(self, batch, batch_idx):
        return None

    def test_step(self, batch, batch_idx):
        return None

    def configure_optimizers(self):
        raise NotImplementedError

    def train_dataloader(self):
        return None

    def val_dataloader(self):
        return None

    def test_dataloader(self):
        return None

    def on_fit_start(self):
        pass

    def on_train_epoch_start(self):
        pass

    def on_train_epoch_end(self):
        pass

    def on_validation_epoch_end(self):
        pass

    def on_fit_end(self):
        pass


class LightningDataModule:
    def __init__(self):
        self.trainer = None

    def prepare_data(self):
        pass

    def setup(self, stage: Optional[str] = None):
        pass

    def train_dataloader(self):
        return None

    def val_dataloader(self):
        return None

    def test_dataloader(self):
        return None


class _DDPWrapper(nn.Module):
    """routes DDP forward() calls to the module's *_step methods (like Lightning's _LightningModuleWrapperBase)"""

    def __init__(self, module):
        super().__init__()
        self.module = module

    def forward(self, stage, batch, batch_idx):
        return getattr(self.module, f"{stage}_step")(batch, batch_idx)


def _find_free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def _to_device(batch, device):
    if isinstance(batch, torch.Tensor):
        return batch.to(device, non_blocking=True)
    if isinstance(batch, (list, tuple)):
        return type(batch)(_to_device(b, device) for b in batch)
    if isinstance(batch, dict):
        return {k: _to_device(v, device) for k, v in batch.items()}
    return batch


_PRECISION_ALIASES = {
    16: "16-mixed", "16": "16-mixed", "16-mixed": "16-mixed",
    "bf16": "bf16-mixed", "bf16-mixed": "bf16-mixed",
    32: "32-true", "32": "32-true", "32-true": "32-true",
    64: "64-true", "64": "64-true", "64-true": "64-true",
}


class Trainer:
    def __init__(self, accelerator: str = "auto", strategy: str = "auto", devices: Union[int, str, List[int]] = "auto",
                 num_nodes: int = 1, precision: Union[int, str] = "32-true", max_epochs: Optional[int] = None,
                 max_steps: int = -1, limit_train_batches: Optional[int] = None, limit_val_batches: Optional[int] = None,
                 log_every_n_steps: int = 50, enable_checkpointing: bool = True, enable_progress_bar: bool = True,
                 default_root_dir: Optional[str] = None, deterministic: bool = False, benchmark: Optional[bool] = None,
                 gradient_clip_val: Optional[float] = None, accumulate_grad_batches: int = 1,
                 num_sanity_val_steps: int = 2, logger: Any = None, callbacks: Any = None):
        self.max_epochs = max_epochs if max_epochs is not None else (1000 if max_steps == -1 else 10**9)
        self.max_steps = max_steps
        self.limit_train_batches = limit_train_batches
        self.limit_val_batches = limit_val_batches
        self.log_every_n_steps = log_every_n_steps
        self.enable_checkpointing = enable_checkpointing
        self.default_root_dir = default_root_dir or os.getcwd()
        self.gradient_clip_val = gradient_clip_val
        self.accumulate_grad_batches = accumulate_grad_batches
        self.current_epoch = 0
        self.global_step = 0
        self.callback_metrics: Dict[str, torch.Tensor] = {}
        self.logged_metrics: Dict[str, float] = {}
        self._children = []

        # ---------------------------------------------------------- accelerator
        accelerator = accelerator.lower() if isinstance(accelerator, str) else accelerator
        if accelerator == "auto":
            accelerator = "cuda" if torch.cuda.is_available() else "cpu"
        if accelerator == "gpu":
            if torch.cuda.is_available():
                accelerator = "cuda"
            elif torch.backends.mps.is_available():
                accelerator = "mps"
            else:
                raise MisconfigurationException("No supported gpu backend found!")
        if accelerator == "cuda" and not torch.cuda.is_available():
            raise MisconfigurationException(
                "`CUDAAccelerator` can not run on your system since the accelerator is not available. The following"
                " accelerator(s) is available and can be passed into `accelerator` argument of `Trainer`: ['cpu'].")
        if accelerator not in ("cpu", "cuda", "mps"):
            raise MisconfigurationException(f"You selected an invalid accelerator name: `accelerator={accelerator!r}`.")
        self.accelerator = accelerator

        # ---------------------------------------------------------- devices
        if devices == "auto":
            devices = torch.cuda.device_count() if accelerator == "cuda" else 1
        if isinstance(devices, str):
            devices = int(devices) if devices != "-1" else -1
        if devices == -1:
            devices = torch.cuda.device_count() if accelerator == "cuda" else os.cpu_count()
        if isinstance(devices, (list, tuple)):
            device_ids = list(devices)
        else:
            device_ids = list(range(int(devices)))
        if accelerator == "cuda":
            n = torch.cuda.device_count()
            for i in device_ids:
                if i >= n:
                    raise MisconfigurationException(
                        f"You requested gpu: {device_ids}\n But your machine only has: {list(range(n))}")
        self.num_devices = len(device_ids)
        self.device_ids = device_ids

        # ---------------------------------------------------------- precision
        if precision not in _PRECISION_ALIASES:
            raise ValueError(f"Precision {precision!r} is invalid. Allowed precision values: {sorted(map(str, _PRECISION_ALIASES))}")
        if precision in (16, "16", "bf16"):
            print(f"Using {_PRECISION_ALIASES[precision]} instead of legacy precision={precision!r}")
        self.precision = _PRECISION_ALIASES[precision]
        if self.precision == "16-mixed" and accelerator == "cpu":
            raise MisconfigurationException(
                "`Trainer(accelerator='cpu', precision='16-mixed')` is not supported. `precision='bf16-mixed'` is"
                " supported on CPU, or use a GPU.")

        # ---------------------------------------------------------- strategy
        if strategy == "auto":
            strategy = "ddp" if self.num_devices > 1 else "single_device"
        if strategy not in ("single_device", "ddp", "ddp_spawn"):
            raise MisconfigurationException(f"Strategy {strategy!r} is not supported by lightning")
        if strategy == "ddp_spawn":
            strategy = "ddp"  # good enough for the examples here
        self.strategy = strategy
        self.world_size = self.num_devices * num_nodes if strategy == "ddp" else 1
        self.global_rank = int(os.environ.get("RANK", 0)) if strategy == "ddp" else 0
        self.local_rank = int(os.environ.get("LOCAL_RANK", 0)) if strategy == "ddp" else 0

        if accelerator == "cuda":
            self.root_device = torch.device("cuda", device_ids[self.local_rank])
        elif accelerator == "mps":
            self.root_device = torch.device("mps")
        else:
            self.root_device = torch.device("cpu")

        if deterministic:
            torch.use_deterministic_algorithms(True, warn_only=True)
            if accelerator == "cuda":
                torch.backends.cudnn.deterministic = True
        if benchmark is not None and accelerator == "cuda":
            torch.backends.cudnn.benchmark = benchmark

        if self.is_global_zero:
            print(f"GPU available: {torch.cuda.is_available()} (cuda), used: {accelerator == 'cuda'}")
            print(f"Precision: {self.precision}, strategy: {self.strategy}, devices: {self.num_devices}")

    # ------------------------------------------------------------------ misc
    @property
    def is_global_zero(self):
        return self.global_rank == 0

    def _setup_ddp(self):
        if self.strategy != "ddp" or self.world_size == 1:
            return
        if "LOCAL_RANK" not in os.environ:
            # launched with plain `python script.py`: re-launch the script for the other local ranks
            os.environ["MASTER_ADDR"] = os.environ.get("MASTER_ADDR", "127.0.0.1")
            os.environ["MASTER_PORT"] = os.environ.get("MASTER_PORT", str(_find_free_port()))
            os.environ["WORLD_SIZE"] = str(self.world_size)
            for local_rank in range(1, self.num_devices):
                env = dict(os.environ, LOCAL_RANK=str(local_rank), RANK=str(local_rank))
                self._children.append(subprocess.Popen([sys.executable] + sys.argv, env=env))
            atexit.register(self._wait_for_children)
            os.environ["LOCAL_RANK"] = "0"
            os.environ["RANK"] = "0"
            self.global_rank, self.local_rank = 0, 0
        if self.accelerator == "cuda":
            self.root_device = torch.device("cuda", self.device_ids[self.local_rank])
            torch.cuda.set_device(self.root_device)
        backend = "nccl" if self.accelerator == "cuda" else "gloo"
        if not dist.is_initialized():
            dist.init_process_group(backend=backend, rank=self.global_rank, world_size=self.world_size)
        print(f"Initializing distributed: GLOBAL_RANK: {self.global_rank}, MEMBER: {self.global_rank + 1}/{self.world_size}")

    def _autocast(self):
        if self.precision == "16-mixed":
            return torch.autocast(device_type=self.root_device.type, dtype=torch.float16)
        if self.precision == "bf16-mixed":
            return torch.autocast(device_type=self.root_device.type, dtype=torch.bfloat16)
        return nullcontext()

    def _distributed_loader(self, loader, shuffle):
        if loader is None or self.world_size == 1:
            return loader
        sampler = DistributedSampler(loader.dataset, num_replicas=self.world_size, rank=self.global_rank,
                                     shuffle=shuffle, seed=int(os.environ.get("PL_GLOBAL_SEED", 0)))
        return DataLoader(loader.dataset, batch_size=loader.batch_size, sampler=sampler,
                          num_workers=loader.num_workers, collate_fn=loader.collate_fn,
                          pin_memory=loader.pin_memory, drop_last=loader.drop_last)

    def _collect(self, module, prefix_filter=None):
        out = {}
        for k, vals in module._logged.items():
            out[k] = sum(vals) / len(vals)
        module._logged = {}
        for k, v in out.items():
            self.callback_metrics[k] = torch.tensor(v)
            self.logged_metrics[k] = v
        return out

    @staticmethod
    def _unpack_optimizers(conf):
        if isinstance(conf, torch.optim.Optimizer):
            return conf, None
        if isinstance(conf, dict):
            sched = conf.get("lr_scheduler")
            if isinstance(sched, dict):
                sched = sched["scheduler"]
            return conf["optimizer"], sched
        if isinstance(conf, (list, tuple)) and len(conf) == 2 and isinstance(conf[0], (list, tuple)):
            return conf[0][0], (conf[1][0] if conf[1] else None)
        if isinstance(conf, (list, tuple)):
            return conf[0], None
        raise MisconfigurationException("Unknown configuration for model optimizers.")

    # ------------------------------------------------------------------ fit
    def fit(self, model: LightningModule, train_dataloaders=None, val_dataloaders=None, datamodule=None, ckpt_path=None):
        self._setup_ddp()
        model._trainer = self
        if datamodule is not None:
            datamodule.trainer = self
            datamodule.prepare_data()
            datamodule.setup("fit")
            train_dataloaders = datamodule.train_dataloader()
            val_dataloaders = datamodule.val_dataloader()
        train_loader = train_dataloaders if train_dataloaders is not None else model.train_dataloader()
        val_loader = val_dataloaders if val_dataloaders is not None else model.val_dataloader()
        train_loader = self._distributed_loader(train_loader, shuffle=True)
        val_loader = self._distributed_loader(val_loader, shuffle=False)

        model.to(self.root_device)
        self.lightning_module = model
        if self.strategy == "ddp" and self.world_size > 1:
            device_ids = [self.root_device.index] if self.root_device.type == "cuda" else None
            runner = DistributedDataParallel(_DDPWrapper(model), device_ids=device_ids)
        else:
            runner = None

        optimizer, scheduler = self._unpack_optimizers(model.configure_optimizers())
        if ckpt_path is not None:
            ckpt = torch.load(ckpt_path, map_location=self.root_device)
            model.load_state_dict(ckpt["state_dict"])
            optimizer.load_state_dict(ckpt["optimizer_states"][0])
            self.current_epoch = ckpt["epoch"] + 1
            self.global_step = ckpt["global_step"]
        scaler = torch.amp.GradScaler("cuda") if (self.precision == "16-mixed" and self.root_device.type == "cuda") else None

        def step_fn(stage, batch, idx):
            if runner is not None and stage == "training":
                return runner(stage, batch, idx)
            return getattr(model, f"{stage}_step")(batch, idx)

        model.on_fit_start()
        t0 = time.time()
        done = False
        while self.current_epoch < self.max_epochs and not done:
            if train_loader is not None and isinstance(getattr(train_loader, "sampler", None), DistributedSampler):
                train_loader.sampler.set_epoch(self.current_epoch)
            model.train()
            model.on_train_epoch_start()
            for batch_idx, batch in enumerate(train_loader):
                if self.limit_train_batches is not None and batch_idx >= self.limit_train_batches:
                    break
                batch = _to_device(batch, self.root_device)
                with self._autocast():
                    out = step_fn("training", batch, batch_idx)
                loss = out["loss"] if isinstance(out, dict) else out
                loss = loss / self.accumulate_grad_batches
                if scaler is not None:
                    scaler.scale(loss).backward()
                else:
                    loss.backward()
                if (batch_idx + 1) % self.accumulate_grad_batches == 0:
                    if self.gradient_clip_val:
                        if scaler is not None:
                            scaler.unscale_(optimizer)
                        torch.nn.utils.clip_grad_norm_(model.parameters(), self.gradient_clip_val)
                    if scaler is not None:
                        scaler.step(optimizer)
                        scaler.update()
                    else:
                        optimizer.step()
                    optimizer.zero_grad(set_to_none=True)
                    self.global_step += 1
                if self.max_steps != -1 and self.global_step >= self.max_steps:
                    done = True
                    break
            train_metrics = self._collect(model)
            model.on_train_epoch_end()
            if scheduler is not None:
                scheduler.step()
            val_metrics = self._run_eval(model, val_loader, "validation") if val_loader is not None else {}
            if self.is_global_zero:
                shown = {**train_metrics, **val_metrics}
                print(f"Epoch {self.current_epoch}: " + ", ".join(f"{k}={v:.4f}" for k, v in shown.items()))
                if self.enable_checkpointing:
                    self._save_checkpoint(model, optimizer)
            self.current_epoch += 1
        if self.current_epoch >= self.max_epochs or done:
            self.current_epoch = min(self.current_epoch, self.max_epochs)
        model.on_fit_end()
        if self.is_global_zero:
            print(f"`Trainer.fit` stopped: max_epochs={self.max_epochs} reached. ({time.time() - t0:.2f}s)")
        if self.strategy == "ddp" and self.world_size > 1:
            dist.barrier()

    @torch.no_grad()
    def _run_eval(self, model, loader, stage):
        was_training = model.training
        model.eval()
        for batch_idx, batch in enumerate(loader):
            if self.limit_val_batches is not None and batch_idx >= self.limit_val_batches:
                break
            batch = _to_device(batch, self.root_device)
            with self._autocast():
                getattr(model, f"{stage}_step")(batch, batch_idx)
        if stage == "validation":
            model.on_validation_epoch_end()
        metrics = self._collect(model)
        model.train(was_training)
        return metrics

    def validate(self, model, dataloaders=None, datamodule=None):
        model._trainer = self
        if datamodule is not None:
            dataloaders = datamodule.val_dataloader()
        loader = self._distributed_loader(dataloaders if dataloaders is not None else model.val_dataloader(), False)
        model.to(self.root_device)
        return [self._run_eval(model, loader, "validation")]

    def test(self, model, dataloaders=None, datamodule=None):
        model._trainer = self
        if datamodule is not None:
            datamodule.setup("test")
            dataloaders = datamodule.test_dataloader()
        loader = self._distributed_loader(dataloaders if dataloaders is not None else model.test_dataloader(), False)
        model.to(self.root_device)
        return [self._run_eval(model, loader, "test")]

    def _save_checkpoint(self, model, optimizer):
        ckpt_dir = os.path.join(self.default_root_dir, "checkpoints")
        os.makedirs(ckpt_dir, exist_ok=True)
        path = os.path.join(ckpt_dir, f"epoch={self.current_epoch}-step={self.global_step}.ckpt")
        torch.save({"epoch": self.current_epoch, "global_step": self.global_step,
                    "state_dict": model.state_dict(), "optimizer_states": [optimizer.state_dict()],
                    "hyper_parameters": dict(model.hparams)}, path)
        self.last_checkpoint = path

    def _wait_for_children(self):
        if dist.is_available() and dist.is_initialized():
            dist.destroy_process_group()
        rc = 0
        for p in self._children:
            try:
                rc = p.wait(timeout=120) or rc
            except subprocess.TimeoutExpired:
                p.kill()
                rc = rc or 1
        if rc:
            print(f"a DDP child process exited with code {rc}", file=sys.stderr)
            sys.stderr.flush()
            sys.stdout.flush()
            os._exit(rc)
