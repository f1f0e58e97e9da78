"""Print the table of `tests/programs/`: each program before and after `fix`, and its CUDA probe.

    .venv-test/bin/python bench/programs_table.py [--target portable|xla] [NAME ...]

Columns: before (the original as it comes, and with its CPU flags), after (the rewritten one as
it comes; "unchanged" when fix left it for a person), probe (the rewritten program stops where
the original does under the CUDA probe), the problems `tests/test_programs.py` fails on, and
the wall time of the check.
"""

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from program_check import check, probe_regression, programs  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--target", default="portable")
    parser.add_argument("names", nargs="*")
    opts = parser.parse_args()
    rows, failing = [], 0
    for program in programs():
        if opts.names and program.name not in opts.names:
            continue
        start = time.perf_counter()
        with tempfile.TemporaryDirectory() as work:
            r = check(program, Path(work), opts.target)
        seconds = time.perf_counter() - start
        before = "runs" if r.default_before.ok else "fails"
        if r.cpu_before is not None:
            before += " / CPU flags: " + ("runs" if r.cpu_before.ok else "fails")
        after = ("runs" if r.after.ok else "fails") if r.changed else ("unchanged, runs" if r.after.ok else "unchanged")
        probe = "regression" if probe_regression(r.probe_before, r.probe_after) else f"same ({r.probe_after['status']})"
        failing += bool(r.problems)
        rows.append((r.name, r.shape, before, after, probe, "; ".join(r.problems)[:200] or "ok", f"{seconds:.0f} s"))
        print(" | ".join(rows[-1]), flush=True)
    print(f"\n{len(rows) - failing}/{len(rows)} programs pass")
    return 0


if __name__ == "__main__":
    sys.exit(main())
