"""The fix edits of a JSON/SARIF scan from the pruned fix against the whole file's fix, file by file.

    .venv-test/bin/python bench/edits_diff.py [TREE ...] [--target T] [--jobs N] [--show N]

`scan --format json` attaches each fixable finding's fix as edits, read off an in-memory fix
of its file. That fix runs on the file with the statements no rule can match left out where
it can be shown to give the whole file's fix exactly (migrator/sources/pruned_fix.py), and falls back
to fixing the whole file elsewhere. For every Python file of each tree (default: the installed
torch, transformers, diffusers and timm of bench/.venv-bench, or of `BENCH_VENV`) with a
fixable finding, this computes the findings with their edits both ways (`api._with_edits`,
with `pruned=False` for the whole-file fix) and prints per tree how many files came out the
same, how many differ (must be 0: exit 1 otherwise) and how many fell back to the whole file
for at least one of their fixes, with the reasons, and the CPU seconds each way took. Files
are read, never imported or run.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

VENV = Path(os.environ.get("BENCH_VENV") or HERE / ".venv-bench")
SITE = VENV / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages"
TREES = ("torch", "transformers", "diffusers", "timm")


def _key(findings) -> list[tuple]:
    """What a reporter prints of each finding (positions, message, fix with its edits)."""
    return [(f.rule_id, f.span, f.cell, f.severity, f.message, f.snippet, f.fix) for f in findings]


def compare(path: str, target: str = "portable") -> tuple[str, str, float, float, list[str]]:
    """(path, "same"/"different"/"none", CPU seconds pruned, CPU seconds whole, fallback reasons)."""
    from migrator.api import ScanOptions, _deep_recursion, _index, _scan_source, _with_edits
    from migrator.sources.discover import is_test_path

    options = ScanOptions(target=target)
    index = _index(options)
    raw = Path(path).read_bytes()
    with _deep_recursion():
        found = _scan_source(raw, path, "python", options, index, is_test_path(path), False)
        if not any(f.fixable and f.cell is None for f in found):
            return path, "none", 0.0, 0.0, []
        reasons: list[str] = []
        start = time.process_time()
        new = _with_edits(raw, path, "python", options, found, fallbacks=reasons)
        middle = time.process_time()
        old = _with_edits(raw, path, "python", options, found, pruned=False)
        end = time.process_time()
    return path, "same" if _key(new) == _key(old) else "different", middle - start, end - middle, reasons


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("trees", nargs="*", type=Path, help=f"package folders (default: {', '.join(TREES)} in {SITE})")
    parser.add_argument("--target", default="portable", help="portable (default), neuron or xla")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes (default 1)")
    parser.add_argument("--show", type=int, default=8, help="fallback reasons to list per tree")
    args = parser.parse_args()
    trees = args.trees or [SITE / name for name in TREES]
    different_total = 0
    for tree in trees:
        if not tree.is_dir():
            raise SystemExit(f"{tree}: no such folder (see scan_speed.py for the bench environment, or set BENCH_VENV)")
        files = sorted(str(p) for p in tree.rglob("*.py"))
        results = []
        with ProcessPoolExecutor(args.jobs) as pool:
            results = list(pool.map(compare, files, [args.target] * len(files), chunksize=8))
        fixable = [r for r in results if r[1] != "none"]
        different = [r for r in fixable if r[1] == "different"]
        fell_back = [r for r in fixable if r[4]]
        reasons = Counter(reason.split(":")[0] for r in fixable for reason in r[4])
        new_cpu, old_cpu = sum(r[2] for r in fixable), sum(r[3] for r in fixable)
        print(f"{tree.name} ({args.target}): {len(files)} files, {len(fixable)} with fixable findings: "
              f"same {len(fixable) - len(different)} / different {len(different)} / fallback {len(fell_back)} "
              f"(files with at least one fix on the whole file; {sum(len(r[4]) for r in fixable)} fixes); "
              f"CPU seconds pruned {new_cpu:.1f} (fallbacks included), whole {old_cpu:.1f}")
        for reason, count in reasons.most_common(args.show):
            print(f"    fallback {count:4}  {reason}")
        for r in different:
            print(f"    DIFFERENT {r[0]}")
        slow = sorted(fixable, key=lambda r: -r[3])[:5]
        print("    slowest whole: " + ", ".join(f"{Path(r[0]).relative_to(tree)} {r[3]:.1f}->{r[2]:.1f}" for r in slow))
        different_total += len(different)
        sys.stdout.flush()
    return 1 if different_total else 0


if __name__ == "__main__":
    sys.exit(main())
