"""`fix` in memory over the installed sources of real packages: crashes, re-parsing, idempotence.

    .venv-test/bin/python bench/fix_packages.py [--target portable] [--packages torch transformers]

Uses the packages `bench/precision.py` installs into bench/.venv-bench (torch 2.13.0 CPU,
transformers, diffusers, timm). Every file is fixed in memory with `--unsafe-fixes` (nothing is
written): the script counts files whose rewrite crashed or was refused, checks that every
rewritten Python file compiles on this Python and that a second fix changes nothing, and prints
per category how many findings were fixed automatically and how many were left for a person.
"""

from __future__ import annotations

import argparse
import ast
import sys
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from precision import site_packages  # noqa: E402

from migrator.api import ScanOptions, fix_source  # noqa: E402
from migrator.sources.discover import discover  # noqa: E402


def fix_one(job: tuple[str, str, str]) -> dict:
    path, kind, target = job
    options = ScanOptions(target=target)
    data = Path(path).read_bytes()
    result = {"fixed": Counter(), "left": Counter(), "crash": None, "failed": None, "unparsable": False, "unstable": False}
    try:
        outcome = fix_source(data, path, kind, options, True)
    except Exception as exc:  # noqa: BLE001 - counted and reported, the run goes on
        result["crash"] = repr(exc)
        return result
    if outcome.failed:
        result["failed"] = outcome.failed
    result["fixed"].update(f.category for f in outcome.applied)
    result["left"].update(f.category for f, _ in outcome.manual)
    if outcome.changed and not outcome.failed:
        if kind == "python":
            try:
                compile(outcome.source, path, "exec", flags=ast.PyCF_ONLY_AST, dont_inherit=True)
            except SyntaxError:
                result["unparsable"] = True
        again = fix_source(outcome.source, path, kind, options, True)
        result["unstable"] = again.source != outcome.source
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", default="portable", choices=["portable", "neuron", "xla"])
    parser.add_argument("--packages", nargs="+", default=["torch", "transformers"])
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    root = site_packages()
    for package in args.packages:
        jobs = [(str(p), kind, args.target) for p, kind in discover([root / package], ())]
        start = time.perf_counter()
        fixed, left = Counter(), Counter()
        crashes, failed, unparsable, unstable, changed_files = [], [], [], [], 0
        with ProcessPoolExecutor(args.jobs) as pool:
            for (path, _, _), r in zip(jobs, pool.map(fix_one, jobs, chunksize=16)):
                fixed.update(r["fixed"])
                left.update(r["left"])
                changed_files += bool(r["fixed"])
                if r["crash"]:
                    crashes.append((path, r["crash"]))
                if r["failed"]:
                    failed.append((path, r["failed"]))
                if r["unparsable"]:
                    unparsable.append(path)
                if r["unstable"]:
                    unstable.append(path)
        seconds = time.perf_counter() - start
        print(f"\n== {package} ({len(jobs)} files, target {args.target}, --unsafe-fixes, {seconds:.1f} s)")
        print(f"files rewritten: {changed_files}; crashes: {len(crashes)}; rewrites refused: {len(failed)}; "
              f"outputs that do not compile: {len(unparsable)}; second pass changed: {len(unstable)}")
        print(f"{'category':14} {'fixed':>7} {'left for a person':>18}")
        for category in sorted(set(fixed) | set(left)):
            print(f"{category:14} {fixed[category]:7} {left[category]:18}")
        print(f"{'total':14} {sum(fixed.values()):7} {sum(left.values()):18}")
        for path, why in (crashes + failed)[:10]:
            print(f"  {path}: {why}")
        for path in (unparsable + unstable)[:10]:
            print(f"  {path}: output does not compile or is not stable")


if __name__ == "__main__":
    main()
