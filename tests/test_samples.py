"""Proof by execution: each migrated sample runs on the CPU and matches a hand-written reference.

Every sample is rewritten with `fix --target portable --unsafe-fixes --write`, then run with the
PyTorch 2.13 CPU build of the test environment. The unmigrated original is run first and must
fail on this CUDA-less machine, so each test shows that the rewrite made the difference.
"""

import re
import shutil
import subprocess
import sys
from dataclasses import dataclass

import pytest

from conftest import ROOT, copy_samples
from program_check import TEARDOWN_ABORT

REFERENCE = ROOT / "tests" / "reference"
RUNNER = ROOT / "tests" / "notebook_runner.py"


@dataclass
class Sample:
    name: str
    command: list  # how to run it; "{file}" is the sample's path
    reference: list  # the hand-written CPU program
    values: tuple  # printed values compared with the reference
    rel_tol: float  # the stated tolerance, relative
    why: str  # why that tolerance


TORCHRUN = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2"]
SAMPLES = [
    Sample("train_amp.py", [sys.executable, "{file}", "--steps", "30"], [sys.executable, REFERENCE / "train_amp_cpu.py", "30"],
           ("final_loss",), 1e-6, "same ops in the same order; BF16 autocast on both sides"),
    Sample("ddp_nccl.py", [*TORCHRUN, "{file}", "--steps", "20"], [*TORCHRUN, REFERENCE / "ddp_cpu.py", "20"],
           ("world", "final_loss"), 1e-6, "gloo all-reduce over two processes on both sides"),
    Sample("infer.py", [sys.executable, "{file}"], [sys.executable, REFERENCE / "infer_cpu.py"],
           ("top1", "checksum"), 1e-6, "same model, batch and BF16 autocast"),
    Sample("compile_cuda.py", [sys.executable, "{file}", "--steps", "20"], [sys.executable, REFERENCE / "compile_cpu.py", "20"],
           ("final_loss",), 1e-4, "Inductor fuses and reorders float32 ops; the reference is eager"),
    Sample("device_args.py", [sys.executable, "{file}"], [sys.executable, REFERENCE / "device_args_cpu.py"],
           ("output",), 1e-6, "same ops on the CPU"),
    Sample("train_notebook.ipynb", [sys.executable, RUNNER, "{file}"], [sys.executable, REFERENCE / "notebook_cpu.py"],
           ("final_loss",), 1e-6, "same ops in the same order; BF16 autocast on both sides"),
]


def run(command, file, cwd, env=None):
    """Run a sample. A torchrun whose rank torch's gloo aborts while it shuts down (see
    program_check.TEARDOWN_ABORT; the samples write no files to resume from) is run again, at most
    twice; any other result counts at once."""
    args = [str(file) if str(a) == "{file}" else str(a) for a in command]
    for _ in range(3):
        proc = subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=900, env=env)
        if proc.returncode == 0 or TEARDOWN_ABORT not in proc.stderr:
            break
    return proc


def check_sample(sample: Sample, target: str, path, tmp_path, cli, env=None) -> str:
    """Run the original (must fail), fix it for `target` with unsafe fixes, run it and compare
    each printed value with the reference. Returns the migrated text."""
    assert run(sample.command, path, tmp_path, env).returncode != 0, f"the original {sample.name} ran without CUDA"
    cli("fix", path, "--target", target, "--unsafe-fixes", "--write", check=0)
    migrated = run(sample.command, path, tmp_path, env)
    assert migrated.returncode == 0, migrated.stderr[-4000:]
    reference = run(sample.reference, None, tmp_path, env)
    assert reference.returncode == 0, reference.stderr[-4000:]
    for key in sample.values:
        got, want = printed(migrated, key), printed(reference, key)
        assert close(got, want, sample.rel_tol), f"{key}: migrated {got}, reference {want} (tolerance {sample.rel_tol}: {sample.why})"
    return path.read_text()


def printed(proc, key):
    match = re.search(rf"(?:^|\s){key}=(\[[^\]]*\]|\S+)", proc.stdout, re.M)
    assert match, f"{key}= not printed\n{proc.stdout}\n{proc.stderr[-3000:]}"
    return match.group(1)


def close(a: str, b: str, rel_tol: float) -> bool:
    try:
        return abs(float(a) - float(b)) <= rel_tol * max(1.0, abs(float(b)))
    except ValueError:
        return a == b  # lists such as top1=[...] and counts compare exactly


@pytest.mark.parametrize("sample", SAMPLES, ids=[s.name for s in SAMPLES])
def test_migrated_sample_runs_and_matches_its_cpu_reference(sample, tmp_path, cli):
    path = copy_samples(tmp_path / "samples") / sample.name
    check_sample(sample, "portable", path, tmp_path, cli)


def test_training_samples_trained():
    """The references are not degenerate: the losses they print fall well below the first loss."""
    proc = subprocess.run([sys.executable, REFERENCE / "train_amp_cpu.py", "30"], capture_output=True, text=True, timeout=300)
    assert float(printed(proc, "final_loss")) < 1.0  # the first loss is about 30


def test_migrated_notebook_keeps_outputs_and_metadata(tmp_path, cli):
    import json

    samples = copy_samples(tmp_path / "samples")
    before = json.loads((samples / "train_notebook.ipynb").read_text())
    cli("fix", samples / "train_notebook.ipynb", "--target", "portable", "--unsafe-fixes", "--write", check=0)
    after = json.loads((samples / "train_notebook.ipynb").read_text())
    assert after["metadata"] == before["metadata"] and len(after["cells"]) == len(before["cells"])
    for old, new in zip(before["cells"], after["cells"]):
        assert {k: v for k, v in old.items() if k != "source"} == {k: v for k, v in new.items() if k != "source"}
    assert "!if command -v neuron-ls >/dev/null 2>&1; then neuron-ls; else nvidia-smi; fi\n" in after["cells"][1]["source"] and "cuda" not in "".join(after["cells"][2]["source"])


def test_second_fix_run_changes_nothing_on_any_sample(tmp_path, cli):
    samples = copy_samples(tmp_path / "samples")
    for target in ("portable", "neuron", "xla"):
        cli("fix", samples, "--target", target, "--write", "--unsafe-fixes")
        before = {p.name: p.read_bytes() for p in samples.iterdir()}
        proc = cli("fix", samples, "--target", target, "--write", "--unsafe-fixes")
        assert re.search(r"\b0 fixed\b", proc.stderr), proc.stderr
        assert {p.name: p.read_bytes() for p in samples.iterdir()} == before
        shutil.rmtree(samples)
        copy_samples(samples)
