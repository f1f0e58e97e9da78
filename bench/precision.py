"""Precision of neuron-migrator on real packages, from hand labels kept in this folder.

    .venv-test/bin/python bench/precision.py            # prints precision per category
    .venv-test/bin/python bench/precision.py --dump     # prints the sample with context, for labelling

Installs torch, transformers, diffusers and timm (pinned, without dependencies; torch is the CPU
build) into bench/.venv-bench, scans their installed sources with the default target, and
draws a fixed stratified sample: up to 25 findings per category with a fixed seed. Each sampled
finding is labelled by hand in `precision-labels.csv` (package, path, line, rule, true/false,
note): true when the flagged code really stops or silently degrades the code on Neuron. Prints
precision per category, the number of files that could not be parsed, and any sampled finding
that has no label (after a version or rule change).
"""

from __future__ import annotations

import argparse
import csv
import random
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
VENV = HERE / ".venv-bench"
PACKAGES = {"torch": "torch==2.13.0", "transformers": "transformers==5.23.0", "diffusers": "diffusers==0.42.1",
            "timm": "timm==1.0.31"}
LABELS = HERE / "precision-labels.csv"
SEED = 20261129
PER_CATEGORY = 25


def site_packages() -> Path:
    py = VENV / "bin" / "python"
    if not py.exists():
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
    for name, pin in PACKAGES.items():
        found = subprocess.run([str(py), "-c", f"import importlib.util as u; print(u.find_spec('{name}') is not None)"],
                               capture_output=True, text=True).stdout.strip()
        if found != "True":
            deps = [] if name == "torch" else ["--no-deps"]
            subprocess.run([str(py), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *deps, pin], check=True)
    out = subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                         capture_output=True, text=True, check=True).stdout.strip()
    return Path(out)


def main() -> int:
    sys.path.insert(0, str(HERE.parent))
    from migrator import ScanOptions, scan_paths

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dump", action="store_true", help="print the sample with source context")
    args = parser.parse_args()
    site = site_packages()
    findings = []
    for package in PACKAGES:
        report = scan_paths([site / package], ScanOptions(jobs=2))
        unparsed = sum(1 for f in report.findings if f.rule_id == "NRN000")
        print(f"{package:13} {report.files:5} files {report.lines:9,} lines {len(report.findings):5} findings "
              f"{unparsed} not parsed")
        for f in report.findings:
            if f.rule_id != "NRN000":
                findings.append((package, Path(f.path).relative_to(site).as_posix(), f.span.line, f.rule_id, f.category))
    by_category = defaultdict(list)
    for item in sorted(findings):
        by_category[item[4]].append(item)
    rng = random.Random(SEED)
    sample = []
    for category in sorted(by_category):
        items = by_category[category]
        sample += rng.sample(items, min(PER_CATEGORY, len(items)))
    if args.dump:
        for package, path, line, rule, category in sample:
            lines = (site / path).read_text(encoding="utf-8", errors="replace").splitlines()
            context = "\n".join(f"    {n + 1:5}{'>' if n + 1 == line else ' '} {lines[n]}" for n in range(max(0, line - 3), min(len(lines), line + 1)))
            print(f"{package},{path},{line},{rule},{category}\n{context}")
        return 0
    labels = {}
    with open(LABELS, newline="") as handle:
        for row in csv.DictReader(handle):
            labels[(row["package"], row["path"], int(row["line"]), row["rule"])] = row["label"] == "true"
    per = defaultdict(lambda: [0, 0])
    missing = []
    for package, path, line, rule, category in sample:
        key = (package, path, line, rule)
        if key not in labels:
            missing.append(key)
            continue
        per[category][0] += labels[key]
        per[category][1] += 1
    total_true = sum(t for t, _ in per.values())
    total = sum(n for _, n in per.values())
    print(f"sample: {len(sample)} findings (seed {SEED}, up to {PER_CATEGORY} per category), {len(missing)} unlabelled")
    for category, (true, n) in sorted(per.items()):
        print(f"  {category:13} precision {true / n:.2f} ({true}/{n})")
    print(f"  {'all':13} precision {total_true / total:.3f} ({total_true}/{total})  target >= 0.95")
    for key in missing:
        print(f"  unlabelled: {key}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
