"""Scan speed and memory of neuron-migrator against TorchFix 0.7 on the installed transformers.

    .venv-test/bin/python bench/scan_speed.py [--skip-torchfix]

Installs transformers (without dependencies) and torchfix==0.7.0 into a scratch virtual
environment (bench/.venv-bench; TorchFix pins an old libcst, so it cannot share ours), then in
one run measures on the same tree:
  1. a cold full scan (empty cache, 2 workers)       target: < 20 s and >= 30x faster than TorchFix
  2. a warm rescan, nothing changed                  target: < 1.5 s
  3. the pre-commit path: 5 median-size files, interpreter start included, as the hook runs it:
     < 1 s (the 5 largest files, about 24,000 lines, are printed too, without a target)
  4. peak memory of the full scan, all processes summed: < 500 MiB
and prints each figure with its target and the ratio against TorchFix.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
VENV = HERE / ".venv-bench"
TRANSFORMERS = "transformers==5.23.0"
TORCHFIX = "torchfix==0.7.0"


def sh(*args: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(list(args), check=True, **kw)


def ensure_scratch_env() -> Path:
    """The bench environment with TorchFix and transformers. It is shared with precision.py
    and ruff_ratio.py (diffusers, timm, torch, ruff): what is missing is added, nothing is
    removed (an earlier version rebuilt it from scratch and dropped their packages)."""
    py = VENV / "bin" / "python"
    if not py.exists():
        sh(sys.executable, "-m", "venv", str(VENV))
    for module, spec, deps in (("torchfix", TORCHFIX, True), ("transformers", TRANSFORMERS, False)):
        found = subprocess.run([str(py), "-c", f"import importlib.util as u; print(u.find_spec('{module}') is not None)"],
                               capture_output=True, text=True).stdout.strip()
        if found != "True":
            sh(str(py), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *([] if deps else ["--no-deps"]), spec)
    site = subprocess.run([str(py), "-c", "import importlib.util as u; print(u.find_spec('transformers').submodule_search_locations[0])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    return Path(site)


def _tree_rss_kib(root: int) -> int:
    """Summed resident memory (KiB) of `root` and its descendants, from /proc."""
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/status") as handle:
                fields = dict(line.split(":", 1) for line in handle if ":" in line)
        except OSError:
            continue
        pid = int(entry)
        children.setdefault(int(fields.get("PPid", "0").strip()), []).append(pid)
        rss[pid] = int(fields.get("VmRSS", "0 kB").split()[0]) if "VmRSS" in fields else 0
    total, stack = 0, [root]
    while stack:
        pid = stack.pop()
        total += rss.get(pid, 0)
        stack.extend(children.get(pid, []))
    return total


def timed(cmd: list[str], **kw) -> tuple[float, int, subprocess.CompletedProcess]:
    """Wall seconds and peak summed RSS (MiB) of a command and its children."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)
    peak = 0
    done = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not done.is_set():
            peak = max(peak, _tree_rss_kib(proc.pid))
            time.sleep(0.2)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    out, err = proc.communicate()
    seconds = time.perf_counter() - start
    done.set()
    sampler.join()
    return seconds, peak // 1024, subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--skip-torchfix", action="store_true", help="do not run TorchFix (takes over ten minutes)")
    args = parser.parse_args()
    tree = ensure_scratch_env()
    nm = [sys.executable, "-m", "migrator"]
    py_files = sorted(tree.rglob("*.py"))
    lines = sum(p.read_bytes().count(b"\n") for p in py_files)
    print(f"tree: {tree} ({len(py_files)} .py files, {lines:,} lines)")
    cache = Path(tempfile.mkdtemp(prefix="nrn-bench-cache-"))
    try:
        cold, cold_mem, proc = timed([*nm, "scan", str(tree), "-j", "2", "--fail-on", "never", "--cache-dir", str(cache)])
        summary = proc.stdout.strip().splitlines()[-1]
        warm, _, _ = timed([*nm, "scan", str(tree), "-j", "2", "--fail-on", "never", "--cache-dir", str(cache)])
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    by_size = sorted(py_files, key=lambda p: p.stat().st_size)
    middle = len(by_size) // 2
    median_five = [str(p) for p in by_size[middle - 2: middle + 3]]  # a typical commit
    largest_five = [str(p) for p in by_size[-5:]]  # the worst case: ~24,000 lines
    hook, _, _ = timed([*nm, "scan", "--no-cache", "--fail-on", "never", *median_five])
    hook_large, _, _ = timed([*nm, "scan", "--no-cache", "--fail-on", "never", *largest_five])
    rows = [
        ("cold full scan (s)", cold, 20.0),
        ("warm rescan (s)", warm, 1.5),
        ("pre-commit, 5 median-size files (s)", hook, 1.0),
        ("pre-commit, 5 largest files (s, no target)", hook_large, float("inf")),
        ("peak memory, full scan (MiB)", cold_mem, 500.0),
    ]
    print(f"neuron-migrator: {summary}")
    if not args.skip_torchfix:
        torchfix = str(VENV / "bin" / "torchfix")
        tf, tf_mem, tf_proc = timed([torchfix, str(tree)])
        print(f"TorchFix 0.7.0: {tf:.1f} s, peak {tf_mem} MiB, exit {tf_proc.returncode}")
        rows.append(("TorchFix / neuron-migrator, cold (ratio)", tf / cold, 30.0))
    print(f"{'measure':42} {'value':>9} {'target':>8}  ok")
    for name, value, target in rows:
        ok = value >= target if "ratio" in name else value < target
        print(f"{name:42} {value:9.2f} {target:8.1f}  {'yes' if ok else 'NO'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
