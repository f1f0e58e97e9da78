"""Check one program of `tests/programs/` before and after `fix --target T --write --unsafe-fixes`.

Used by `tests/test_programs.py` (one test per program) and by `bench/programs_table.py` (the
table of the closing note). For each program, in two temporary copies of its folder:

- the CUDA probe (`cuda_probe.py`) runs the original and the rewritten program as a GPU user
  would (`args`); the rewritten one must stop at the same kind of place: at a real CUDA
  operation, or at the end if the original got there. Failing earlier in plain Python, or
  running to the end on the CPU while a GPU was reported, is a regression of the GPU path;
- where the original runs on the CPU (`cpu_args`), the rewritten one must run with the same
  arguments and as it comes (`args`), and print the same RESULT numbers within `tolerance`;
- where the original cannot run on the CPU, the rewritten one runs as it comes, or `fix` left
  the program unchanged and named what blocks it.

The GPU user's command line (`args`) is written to a `launch.sh` beside the program, as teams
keep it, and `fix` migrates that too (`--dist-backend nccl`, `--fp16`); "as it comes" runs the
arguments of the migrated script. The CUDA probe runs the rewritten program with the original
arguments: on a GPU host nobody has to change the launch command.

Programs print one line `RESULT {json}`; DDP programs run under
`torchrun --standalone --nproc_per_node 2` (gloo on the CPU). Each run gets its own network
namespace where the machine allows it (programs bind fixed ports), and runs with
`TORCHDYNAMO_DISABLE=1` (Inductor takes minutes on 2 cores; `tests/test_samples.py` runs
compiled code). `transformers.py` and `lightning.py` in a program's folder stand in for the
libraries, which are not installed here, and are not given to `fix`.
"""

from __future__ import annotations

import json
import re
import math
import os
import shlex
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
PROGRAMS = ROOT / "tests" / "programs"
PROBE = ROOT / "tests" / "cuda_probe.py"
RUNNER = ROOT / "tests" / "notebook_runner.py"
TIMEOUT = 240
# The tool under test (another checkout's `migrator/` for a before/after measurement).
TOOL = Path(os.environ.get("NRN_TOOL_ROOT", ROOT))


def programs() -> list[Path]:
    return sorted(p for p in PROGRAMS.iterdir() if (p / "program.yaml").is_file())


@dataclass
class Run:
    ok: bool
    result: dict | None
    tail: str

    @property
    def summary(self) -> str:
        if self.ok:
            return "runs"
        # The error, not torchrun's closing banner of `=`: the last line naming an exception, else
        # the last line with words in it.
        lines = [line.strip() for line in self.tail.strip().splitlines() if any(c.isalnum() for c in line)]
        errors = [line for line in lines if re.search(r"\w+(Error|Exception|Interrupt)\b", line)]
        return "fails: " + ((errors or lines)[-1][:300] if lines else "no output")


@dataclass
class Report:
    name: str
    shape: str
    probe_before: dict
    probe_after: dict
    cpu_before: Run | None  # the original with cpu_args
    cpu_after_flags: Run | None  # the rewritten one with cpu_args
    after: Run  # the rewritten one as it comes
    default_before: Run  # the original as it comes (must fail on this host unless it auto-detects)
    changed: bool
    fix_output: str
    tolerance: float
    args: list = field(default_factory=list)
    cpu_args: list | None = None
    problems: list[str] = field(default_factory=list)


def _command(meta: dict, folder: Path, args: list, launcher: str) -> list[str]:
    entry = str(folder / meta["entry"])
    if entry.endswith(".ipynb"):
        return [sys.executable, str(RUNNER), entry]
    if launcher == "torchrun":
        return [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2", entry, *map(str, args)]
    return [sys.executable, entry, *map(str, args)]


def _can_isolate() -> bool:
    """Whether each run can get its own network namespace (root with unshare and ip, as on CI)."""
    if not (shutil.which("unshare") and shutil.which("ip")):
        return False
    probe_run = subprocess.run(["unshare", "-n", "sh", "-c", "ip link set lo up"], capture_output=True)
    return probe_run.returncode == 0


# Programs bind fixed ports (MASTER_PORT=12355 in the DDP tutorials): each run gets its own
# loopback, so the original and the rewritten program can run side by side. Without that, one at a time.
ISOLATE = _can_isolate()
WORKERS = 2 if ISOLATE else 1


def _isolated(command: list[str]) -> list[str]:
    if not ISOLATE:
        return command
    return ["unshare", "-n", "sh", "-c", 'ip link set lo up && exec "$@"', "sh", *command]


def _env() -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("RANK", "LOCAL_RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")}
    # Inductor needs over a minute per program on 2 cores; compiled code is covered by
    # tests/test_samples.py (samples/compile_cuda.py). Here torch.compile runs eagerly.
    env.update({"PYTHONHASHSEED": "0", "OMP_NUM_THREADS": "1", "TORCHDYNAMO_DISABLE": "1"})
    return env


# torch's gloo process group can abort a rank while it shuts down on a loaded machine
# ("terminate called without an active exception", SIGABRT once the work is done, or a spawned
# rank that dies at exit after RESULT was printed): seen in 1 of 8 to 1 of 4 distributed runs of
# the same rewritten program when two checks run side by side on 2 cores, with this tool and with
# the one before this change alike (the rewrite is byte-identical). Such a run is made again from
# a fresh copy of its folder (a program may have left a snapshot to resume from), at most twice
# more; any other failure counts at once. A torchrun rank killed by a signal (torchrun's report
# says `exitcode  : -6`) is made again too: a Python error in the program exits 1, and a crash the
# rewrite causes comes back in all three runs (CI once saw one such run among 1315 tests, with no
# output kept to tell which signal).
TEARDOWN_ABORT = "terminate called without an active exception"
RANK_SIGNALLED = re.compile(r"^\s*exitcode\s*:\s*-\d+", re.MULTILINE)


def _teardown_crash(result: "Run") -> bool:
    return not result.ok and (TEARDOWN_ABORT in result.tail or result.result is not None
                              or RANK_SIGNALLED.search(result.tail) is not None)


def run(meta: dict, folder: Path, args: list, launcher: str) -> Run:
    pristine = folder.with_name(folder.name + ".pristine")
    shutil.copytree(folder, pristine)
    result = _run_once(meta, folder, args, launcher)
    for _ in range(2):
        if not _teardown_crash(result):
            break
        shutil.rmtree(folder)
        shutil.copytree(pristine, folder)
        result = _run_once(meta, folder, args, launcher)
    return result


def _run_once(meta: dict, folder: Path, args: list, launcher: str) -> Run:
    try:
        proc = subprocess.run(_isolated(_command(meta, folder, args, launcher)), cwd=folder, capture_output=True, text=True,
                              timeout=TIMEOUT, env=_env())
    except subprocess.TimeoutExpired:
        return Run(False, None, f"timed out after {TIMEOUT} s")
    result = None
    for line in proc.stdout.splitlines():
        if line.startswith("RESULT "):
            # Spawned ranks share one stdout: another rank's output may follow on the same line.
            try:
                result = json.JSONDecoder().raw_decode(line[len("RESULT "):])[0]
            except json.JSONDecodeError:
                continue
    return Run(proc.returncode == 0 and result is not None, result, proc.stdout[-2000:] + proc.stderr[-6000:])


def probe(meta: dict, folder: Path) -> dict:
    report = folder.parent / f"{folder.name}-probe.json"
    entry = str(folder / meta["entry"])
    try:
        proc = subprocess.run(_isolated([sys.executable, str(PROBE), str(report), entry, *map(str, meta.get("args") or [])]), cwd=folder,
                              capture_output=True, text=True, timeout=TIMEOUT, env=_env())
    except subprocess.TimeoutExpired:
        return {"status": "error", "type": "timeout", "message": f"timed out after {TIMEOUT} s"}
    if not report.exists():
        return {"status": "error", "type": "probe crashed", "message": proc.stderr[-500:]}
    return json.loads(report.read_text())


def close(a, b, tol: float) -> bool:
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(close(a[k], b[k], tol) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(close(x, y, tol) for x, y in zip(a, b))
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return abs(a - b) <= tol * max(1.0, abs(b))
    return a == b


def probe_regression(before: dict, after: dict) -> str | None:
    """Why the rewritten program's probe run is worse than the original's, or None."""
    if before["status"] == "not run" or (before["status"] == "cuda" and after["status"] == "cuda"):
        return None
    if before["status"] == after["status"] == "ok":
        return None
    if before["status"] == "cuda" and after["status"] == "ok":
        return "the rewritten program ran to the end on the CPU although a CUDA GPU was reported"
    if before["status"] == "error":
        return None  # the original already fails in plain Python: nothing of a GPU path to keep
    return f"the rewritten program failed before any CUDA operation: {after.get('type')}: {after.get('message')} (line {after.get('line')})"


LAUNCH = "launch.sh"
STAND_INS = {"transformers.py", "lightning.py"}


def write_launch(folder: Path, meta: dict) -> None:
    """The GPU user's command line as a launch script, as teams keep it: `fix` migrates it too."""
    launcher = "torchrun --standalone --nproc_per_node 2" if meta.get("launcher") == "torchrun" else "python"
    line = " ".join([launcher, shlex.quote(meta["entry"]), *(shlex.quote(str(a)) for a in meta.get("args") or [])])
    (folder / LAUNCH).write_text(f"#!/bin/sh\n{line}\n")


def launch_args(folder: Path, meta: dict) -> list:
    """The arguments of the launch script's command, after `fix` (the entry and launcher stay)."""
    words = shlex.split((folder / LAUNCH).read_text().splitlines()[1])
    return words[words.index(meta["entry"]) + 1:]


def fix(folder: Path, meta: dict, target: str) -> tuple[bool, str]:
    """Run the real CLI over the user's files of the program (not its stand-in libraries)."""
    # `transformers.py` and `lightning.py` stand in for the libraries, which are not installed
    # here: a user runs `fix` on their own code, not on site-packages.
    library = set(meta.get("library") or []) | STAND_INS
    files = [str(p) for p in sorted(folder.rglob("*")) if p.is_file() and p.name not in library
             and (p.suffix in (".py", ".ipynb") or p.name == LAUNCH)]
    before = {f: Path(f).read_bytes() for f in files}
    proc = subprocess.run([sys.executable, "-m", "migrator", "fix", *files, "--target", target, "--write", "--unsafe-fixes"],
                          cwd=folder, capture_output=True, text=True, timeout=TIMEOUT,
                          env={**os.environ, "PYTHONPATH": str(TOOL), "NO_COLOR": "1"})
    changed = any(Path(f).read_bytes() != data for f, data in before.items())
    return changed, proc.stdout + proc.stderr


def check(program: Path, work: Path, target: str = "portable") -> Report:
    meta = yaml.safe_load((program / "program.yaml").read_text())
    original, fixed = work / "original", work / "fixed"
    for dest in (original, fixed):
        shutil.copytree(program, dest, ignore=shutil.ignore_patterns("__pycache__", "program.yaml"))
    write_launch(fixed, meta)
    changed, fix_output = fix(fixed, meta, target)
    args, launcher = meta.get("args") or [], meta.get("launcher", "python")
    fixed_args = launch_args(fixed, meta)  # what the migrated launch script passes
    cpu_args = meta.get("cpu_args")
    cpu_launcher = meta.get("cpu_launcher") or launcher
    # Each run gets its own copy: programs write checkpoints into their working directory. A run
    # asked twice (an auto-detecting program's CPU arguments are its GPU ones) is made once.
    skipped = {"status": "not run"}
    plans = {
        "probe_before": ("probe", original, None, None),
        "probe_after": ("probe", fixed, None, None),
        "default_before": ("run", original, tuple(map(str, args)), launcher),
        "after": ("run", fixed, tuple(map(str, fixed_args)), launcher),
    }
    if cpu_args is not None:
        plans["cpu_before"] = ("run", original, tuple(map(str, cpu_args)), cpu_launcher)
        plans["cpu_after_flags"] = ("run", fixed, tuple(map(str, cpu_args)), cpu_launcher)
    unique: dict[tuple, str] = {}
    for key, plan in plans.items():
        unique.setdefault(plan, key)

    def job(plan: tuple, name: str):
        kind, base, run_args, run_launcher = plan
        folder = work / name
        shutil.copytree(base, folder)
        if kind == "probe":
            # The xla target replaces the GPU path on purpose: the probe applies to the other targets.
            return probe(meta, folder) if target != "xla" else skipped
        return run(meta, folder, list(run_args), run_launcher)

    with ThreadPoolExecutor(max_workers=WORKERS) as pool:
        futures = {plan: pool.submit(job, plan, name) for plan, name in unique.items()}
        done = {plan: f.result() for plan, f in futures.items()}
    results = {key: done[plan] for key, plan in plans.items()}
    report = Report(program.name, meta.get("shape", ""), results["probe_before"], results["probe_after"],
                    results.get("cpu_before"), results.get("cpu_after_flags"), results["after"], results["default_before"],
                    changed, fix_output, float(meta.get("tolerance", 1e-5)), args, cpu_args)
    report.problems = problems(report)
    return report


def problems(r: Report) -> list[str]:
    """What `tests/test_programs.py` fails on for one program (empty: it passes)."""
    out = []
    regression = probe_regression(r.probe_before, r.probe_after)
    if regression:
        out.append(f"CUDA probe: {regression}")
    if r.cpu_before is not None and r.cpu_before.ok:
        if not r.cpu_after_flags.ok:
            out.append(f"ran before with its CPU flags, fails after fix: {r.cpu_after_flags.summary}")
        elif not close(r.cpu_after_flags.result, r.cpu_before.result, r.tolerance):
            out.append(f"with its CPU flags: RESULT {r.cpu_after_flags.result} after fix, {r.cpu_before.result} before")
    if r.default_before.ok and not r.after.ok:
        out.append(f"ran before as it came, fails after fix: {r.after.summary}")
    if r.after.ok:
        # As it comes, the rewritten program runs with the GPU user's arguments: comparable with the
        # original run with the same arguments (an auto-detecting script), or with its CPU flags
        # where those are the same arguments.
        if r.default_before.ok:
            reference = r.default_before.result
        elif r.cpu_before is not None and r.cpu_before.ok and r.cpu_args == r.args:
            reference = r.cpu_before.result
        else:
            reference = None
        if reference is not None and not close(r.after.result, reference, r.tolerance):
            out.append(f"RESULT {r.after.result} after fix, {reference} before (tolerance {r.tolerance})")
    elif r.changed:
        out.append(f"rewritten but still fails as it comes: {r.after.summary}")
    elif "Left for a person" not in r.fix_output:
        out.append("left unchanged without a finding that names the blocker")
    return out
