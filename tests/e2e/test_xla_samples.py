"""`make e2e`: the samples rewritten with `--target xla` run under PyTorch/XLA's CPU device.

Needs torch==2.9.0 and torch_xla==2.9.0 (the last PyTorch/XLA line Neuron supported), which
`make e2e` installs into `.venv-e2e`; `make test` does not collect this folder. Each original must
fail (no CUDA here), each rewrite must run to the end with PJRT_DEVICE=CPU and match the CPU
reference within the stated tolerance. DDP and torch.compile have no XLA rewrite: for those
samples the test checks that `fix` reports them for a person instead.
"""

import json
import os
import subprocess
import sys

import pytest

from conftest import copy_samples
from test_samples import REFERENCE, RUNNER, Sample, check_sample, close, printed
from test_samples import run as run_with

XLA_ENV = {**os.environ, "PJRT_DEVICE": "CPU"}
BF16_DRIFT = "XLA's autocast casts a different set of ops to BF16 than CPU autocast; over 30 steps the loss drifts"
SAMPLES = [
    Sample("train_amp.py", [sys.executable, "{file}", "--steps", "30"], [sys.executable, REFERENCE / "train_amp_cpu.py", "30"],
           ("final_loss",), 5e-2, BF16_DRIFT),
    Sample("infer.py", [sys.executable, "{file}"], [sys.executable, REFERENCE / "infer_cpu.py"],
           ("top1", "checksum"), 1e-3, "one BF16 forward pass, XLA vs CPU kernels"),
    Sample("device_args.py", [sys.executable, "{file}"], [sys.executable, REFERENCE / "device_args_cpu.py"],
           ("output",), 1e-5, "float32 forward passes, XLA vs CPU kernels"),
    Sample("train_notebook.ipynb", [sys.executable, RUNNER, "{file}"], [sys.executable, REFERENCE / "notebook_cpu.py"],
           ("final_loss",), 1e-3, "BF16 autocast on both sides, XLA vs CPU kernels"),
]


def run(command, file, cwd):
    return run_with(command, file, cwd, XLA_ENV)


def test_this_environment_is_pytorch_xla_2_9():
    import torch
    import torch_xla

    assert torch.__version__.startswith("2.9.0") and torch_xla.__version__.startswith("2.9.0")


@pytest.mark.parametrize("sample", SAMPLES, ids=[s.name for s in SAMPLES])
def test_xla_rewrite_runs_on_the_xla_cpu_device(sample, tmp_path, cli):
    path = copy_samples(tmp_path / "samples") / sample.name
    assert "torch_xla" in check_sample(sample, "xla", path, tmp_path, cli, XLA_ENV)
    left = json.loads(cli("scan", path, "--target", "xla", "--format", "json", "--exit-zero").stdout)
    assert not [f for f in left if f["category"] == "device"], left


def test_training_sample_gets_a_step_boundary(tmp_path, cli):
    path = copy_samples(tmp_path / "samples") / "train_amp.py"
    cli("fix", path, "--target", "xla", "--unsafe-fixes", "--write", check=0)
    loop = path.read_text().split("for step in range(args.steps):", 1)[1]
    assert "        torch_xla.sync()\n" in loop


@pytest.mark.parametrize(("name", "rule"), [("ddp_nccl.py", "NRN403"), ("compile_cuda.py", "NRN503")])
def test_what_xla_cannot_run_is_left_for_a_person(name, rule, tmp_path, cli):
    path = copy_samples(tmp_path / "samples") / name
    proc = cli("fix", path, "--target", "xla", "--unsafe-fixes", "--write", check=0)
    left = proc.stderr.split("Left for a person:", 1)[1]
    assert f" {rule} " in left
    findings = json.loads(cli("scan", path, "--target", "xla", "--format", "json", check=1).stdout)
    assert any(f["rule_id"] == rule and f["severity"] == "error" for f in findings)


LOADER_PROGRAM = '''
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
g = torch.Generator().manual_seed(5)
x = torch.randn(96, 6, generator=g)
data = TensorDataset(x, x @ torch.randn(6, 1, generator=g))
loader = DataLoader(data, batch_size=16)
model = nn.Linear(6, 1).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(3):
    for xb, yb in loader:
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(xb.cuda()), yb.cuda())
        loss.backward()
        optimizer.step()
print(f"final_loss={loss.item():.8f}")
'''


def test_dataloader_training_runs_through_mp_device_loader(tmp_path, cli):
    path = tmp_path / "loader_train.py"
    path.write_text(LOADER_PROGRAM)
    cpu = tmp_path / "loader_cpu.py"  # the reference: the same program with the CUDA calls removed by hand
    cpu.write_text(LOADER_PROGRAM.replace(".cuda()", ""))
    assert run([sys.executable, "{file}"], path, tmp_path).returncode != 0
    cli("fix", path, "--target", "xla", "--unsafe-fixes", "--write", check=0)
    text = path.read_text()
    assert "pl.MpDeviceLoader(DataLoader(data, batch_size=16), torch_xla.device())" in text
    assert "        torch_xla.sync()\n" in text
    migrated = run([sys.executable, "{file}"], path, tmp_path)
    assert migrated.returncode == 0, migrated.stderr[-4000:]
    reference = run([sys.executable, "{file}"], cpu, tmp_path)
    got, want = printed(migrated, "final_loss"), printed(reference, "final_loss")
    assert close(got, want, 1e-4), f"migrated {got}, reference {want} (float32, XLA vs CPU kernels)"
