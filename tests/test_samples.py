"""Proof by execution: the migrated training sample runs on the CPU and matches a reference."""

import re
import subprocess
import sys

from conftest import ROOT, copy_samples

STEPS = 30


def run(*args, cwd):
    return subprocess.run([sys.executable, *map(str, args)], cwd=cwd, capture_output=True, text=True, timeout=300)


def final_loss(proc):
    match = re.search(r"final_loss=([0-9.]+)", proc.stdout)
    assert match, proc.stdout + proc.stderr
    return float(match.group(1))


def test_migrated_training_sample_matches_the_cpu_reference(tmp_path, cli):
    samples = copy_samples(tmp_path / "samples")
    original = run(samples / "train_amp.py", "--steps", STEPS, cwd=tmp_path)
    assert original.returncode != 0 and "CUDA" in original.stderr  # this machine has no GPU

    cli("fix", samples / "train_amp.py", "--target", "portable", "--write", check=0)
    migrated = run(samples / "train_amp.py", "--steps", STEPS, cwd=tmp_path)
    assert migrated.returncode == 0, migrated.stderr
    reference = run(ROOT / "tests" / "reference" / "train_amp_cpu.py", STEPS, cwd=tmp_path)
    assert abs(final_loss(migrated) - final_loss(reference)) <= 1e-6 * max(1.0, final_loss(reference))
    assert final_loss(migrated) < 1.0  # it trained: the first loss is about 30


def test_second_fix_run_changes_nothing_on_any_sample(tmp_path, cli):
    samples = copy_samples(tmp_path / "samples")
    for target in ("portable", "neuron", "xla"):
        cli("fix", samples, "--target", target, "--write", "--unsafe-fixes")
        before = {p.name: p.read_bytes() for p in samples.iterdir()}
        proc = cli("fix", samples, "--target", target, "--write", "--unsafe-fixes")
        assert "0 fixed" in proc.stderr, proc.stderr
        assert {p.name: p.read_bytes() for p in samples.iterdir()} == before
