"""neuron-migrator against ruff on the same trees: the speed goals of issue 15, as ratios.

    .venv-test/bin/python bench/ruff_ratio.py [--torch PATH] [--transformers PATH] [--skip-sarif] [--skip-fix]

Users compare us with ruff. In one run, on the installed torch and on transformers (from
bench/.venv-bench, see scan_speed.py), this measures side by side (the machine may be shared:
only the ratios of figures taken in the same run are meaningful):
  1. a cold scan (empty cache, one worker per CPU)      goal: <= 1.0x `ruff check --select ALL`
     against `ruff check --select ALL --no-cache --exit-zero` on the same tree, twice: in JSON
     (each fixable finding carries its fix's edits, which costs a rewrite of each file with one)
     and in the default text format (fixability only, as `scan` prints it)
  2. the warm rescan, nothing changed                   goal: <= 1 s
  3. on a generated file with about 300 fixable findings, `--format sarif` against
     `--format json`                                    goal: <= 1.5x
  4. `fix` in memory over every file of torch (`fix_source`, `--unsafe-fixes`, nothing written,
     the same calls as fix_packages.py) against the cold scan of torch   goal: <= 3x
and prints each figure with its goal, its ratio and whether the goal is met. `--keep-json DIR`
also writes the sorted findings of both cold scans there (to diff two versions of the tool).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

SARIF_FINDINGS = 300


def _ruff() -> str:
    beside = Path(sys.executable).with_name("ruff")
    return str(beside) if beside.exists() else (shutil.which("ruff") or "ruff")


CPU: dict[int, float] = {}  # id(completed process) -> CPU seconds of it and its children


def timed(cmd: list[str], env: dict[str, str] | None = None) -> tuple[float, subprocess.CompletedProcess]:
    """Wall seconds of `cmd`; its CPU seconds (user + system, all its processes) go to CPU."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    CPU[id(proc)] = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, proc


def _tree_size(tree: Path) -> tuple[int, int]:
    files = list(tree.rglob("*.py"))
    return len(files), sum(p.read_bytes().count(b"\n") for p in files)


def _sorted_findings(stdout: str) -> list[dict]:
    return sorted(json.loads(stdout), key=lambda f: json.dumps(f, sort_keys=True))


def scan_tree(name: str, tree: Path, keep: Path | None) -> tuple[float, float, float, float]:
    """Cold scan in JSON (each fixable finding with its fix's edits, as ruff computes its fixes),
    warm rescan, cold scan in the default text format (seconds) of neuron-migrator and the
    ruff run on `tree`; prints the CPU seconds too (steadier than wall time on a shared machine)."""
    cache = Path(tempfile.mkdtemp(prefix="nrn-ruff-ratio-"))
    text_cache = Path(tempfile.mkdtemp(prefix="nrn-ruff-ratio-text-"))
    env = {**os.environ, "NRN_CACHE_DIR": str(cache)}
    # --framework-source: torch's own files are one NRN002 finding by default; the bench scans
    # them as before, the same work on the same tree as ruff's.
    nm = [sys.executable, "-m", "migrator", "scan", str(tree), "--framework-source", "--format", "json", "--fail-on", "never"]
    try:
        cold, proc = timed(nm, env)
        if proc.returncode not in (0, 1):
            raise SystemExit(f"neuron-migrator failed on {tree}:\n{proc.stderr[-2000:]}")
        warm, _ = timed(nm, env)
        text, tproc = timed(nm[:-4] + ["--fail-on", "never"], {**os.environ, "NRN_CACHE_DIR": str(text_cache)})
        if tproc.returncode not in (0, 1):
            raise SystemExit(f"neuron-migrator (text) failed on {tree}:\n{tproc.stderr[-2000:]}")
    finally:
        shutil.rmtree(cache, ignore_errors=True)
        shutil.rmtree(text_cache, ignore_errors=True)
    ruff, rproc = timed([_ruff(), "check", "--select", "ALL", "--no-cache", "--exit-zero", "--quiet", str(tree)])
    if rproc.returncode != 0:
        raise SystemExit(f"ruff failed on {tree}:\n{rproc.stderr[-2000:]}")
    findings = _sorted_findings(proc.stdout)
    files, lines = _tree_size(tree)
    print(f"{name}: {tree} ({files} .py files, {lines:,} lines); {len(findings)} findings; CPU seconds: "
          f"cold scan {CPU[id(proc)]:.1f} (text {CPU[id(tproc)]:.1f}), ruff {CPU[id(rproc)]:.1f} "
          f"(ratio {CPU[id(proc)] / max(CPU[id(rproc)], 0.01):.2f}, text {CPU[id(tproc)] / max(CPU[id(rproc)], 0.01):.2f})")
    if keep is not None:
        keep.mkdir(parents=True, exist_ok=True)
        (keep / f"{name}.json").write_text(json.dumps(findings, indent=1, sort_keys=True) + "\n")
    return cold, warm, text, ruff


def _fixable_file(folder: Path) -> Path:
    """A training-script-like module with SARIF_FINDINGS fixable findings (NRN101 `.cuda()`),
    one per line, so the file stays short (SARIF fixes the whole file once per finding)."""
    parts = ["import torch\n\n\ndef step(model, batches):\n"]
    for i in range(SARIF_FINDINGS):
        parts.append(f"    x{i} = batches[{i}].cuda()\n")
    parts.append("    return model(x0)\n")
    path = folder / "many_fixes.py"
    path.write_text("".join(parts))
    return path


def sarif_vs_json() -> tuple[float, float, int]:
    folder = Path(tempfile.mkdtemp(prefix="nrn-sarif-"))
    try:
        path = _fixable_file(folder)
        base = [sys.executable, "-m", "migrator", "scan", str(path), "--no-cache", "--fail-on", "never", "--format"]
        js, proc = timed([*base, "json"])
        fixable = sum(1 for f in json.loads(proc.stdout) if f.get("fixable"))
        sarif, sproc = timed([*base, "sarif"])
        if sproc.returncode not in (0, 1):
            raise SystemExit(f"--format sarif failed:\n{sproc.stderr[-2000:]}")
        return sarif, js, fixable
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _fix_one(job: tuple[str, str]) -> int:
    from migrator.api import ScanOptions, fix_source

    path, kind = job
    outcome = fix_source(Path(path).read_bytes(), path, kind, ScanOptions(), True)
    return len(outcome.applied)


def fix_in_memory(tree: Path, jobs: int) -> tuple[float, int]:
    """Seconds to fix every file of `tree` in memory (fix_packages.py's first pass), and fixes applied."""
    from migrator.sources.discover import discover

    todo = [(str(p), kind) for p, kind in discover([tree], ())]
    start = time.perf_counter()
    with ProcessPoolExecutor(jobs) as pool:
        applied = sum(pool.map(_fix_one, todo, chunksize=16))
    return time.perf_counter() - start, applied


def _default_torch() -> Path:
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("torch is not installed in this interpreter: pass --torch PATH")
    return Path(spec.submodule_search_locations[0])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--torch", type=Path, help="torch package folder (default: this interpreter's torch)")
    parser.add_argument("--transformers", type=Path, help="transformers package folder (default: bench/.venv-bench's)")
    parser.add_argument("--skip-fix", action="store_true", help="do not time fix in memory over torch")
    parser.add_argument("--skip-sarif", action="store_true", help="do not time SARIF against JSON")
    parser.add_argument("--keep-json", type=Path, help="write the sorted findings of the cold scans here")
    args = parser.parse_args()
    torch_tree = args.torch or _default_torch()
    if args.transformers is None:
        from scan_speed import ensure_scratch_env

        args.transformers = ensure_scratch_env()
    jobs = os.cpu_count() or 1
    print(f"{sys.version.split()[0]}, {jobs} CPUs; {subprocess.run([_ruff(), '--version'], capture_output=True, text=True).stdout.strip()}")
    rows: list[tuple[str, float, str, float, bool]] = []  # name, value, unit/goal text, ratio, ok
    scans = {}
    for name, tree in (("torch", torch_tree), ("transformers", args.transformers)):
        cold, warm, text, ruff = scan_tree(name, tree, args.keep_json)
        scans[name] = cold
        rows.append((f"{name}: cold scan, JSON with edits (s) / ruff --select ALL ({ruff:.2f} s)", cold, "<= 1.0x", cold / ruff,
                     cold / ruff <= 1.0))
        rows.append((f"{name}: cold scan, text (s) / ruff --select ALL ({ruff:.2f} s)", text, "<= 1.0x", text / ruff, text / ruff <= 1.0))
        rows.append((f"{name}: warm rescan (s)", warm, "<= 1 s", warm, warm <= 1.0))
    if not args.skip_sarif:
        sarif, js, fixable = sarif_vs_json()
        rows.append((f"SARIF (s) / JSON ({js:.2f} s), {fixable} fixable findings", sarif, "<= 1.5x", sarif / js, sarif / js <= 1.5))
    if not args.skip_fix:
        seconds, applied = fix_in_memory(torch_tree, jobs)
        rows.append((f"torch: fix in memory (s, {applied} fixes) / cold scan ({scans['torch']:.1f} s)", seconds, "<= 3x",
                     seconds / scans["torch"], seconds / scans["torch"] <= 3.0))
    print(f"\n{'measure':72} {'value':>8} {'goal':>8} {'ratio':>7}  ok")
    for name, value, goal, ratio, ok in rows:
        print(f"{name:72} {value:8.2f} {goal:>8} {ratio:7.2f}  {'yes' if ok else 'NO'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
