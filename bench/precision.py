"""Precision of neuron-migrator on real packages, from hand labels kept in this folder.

    .venv-test/bin/python bench/precision.py            # prints precision per category and stratum
    .venv-test/bin/python bench/precision.py --dump     # prints the sample with context, for labelling
    .venv-test/bin/python bench/precision.py --dump --unlabelled --context 8

What is scanned, with the default target:
- the installed sources of torch, transformers, diffusers and timm (pinned, without
  dependencies; torch is the CPU build) in bench/.venv-bench (`BENCH_VENV` names another one);
- the `tests/` folders of the source distributions of timm, accelerate and peft (pinned, their
  sha256 checked), which ship real test suites that touch CUDA; installed wheels carry almost no
  test files. They are fetched with `pip download --no-deps --no-binary :all:` into
  bench/.sources/ (gitignored) and unpacked there with tarfile's `data` filter. Their code is
  never imported or run by this script (pip prepares an sdist's metadata when it downloads it).

The scan results are kept in bench/.sources/scan-<key>.json; the key covers the pins and every
file of `migrator/` (rules included), so a rerun with the same versions and the same tool does
not scan again (`--rescan` forces it).

Findings fall in two strata by the tool's own classification (`Finding.is_test`, the
"(test file)" of the text report): test files and other files. In each stratum, each category's
findings are sorted and up to 25 are drawn with a fixed seed (one random generator per stratum
and category). Each sampled finding is labelled by hand in `precision-labels.csv` (package,
path, line, rule, label, note). Labels:
- `true`: the flagged code really stops or silently degrades the code on Neuron;
- `false`: a false positive (the note says why);
- `scaffold`: test scaffolding (a mock, a spoof, a skip marker on CUDA availability, text
  asserted on) that issue 11's Precision list accepts when it is reported at info with a
  message that says it is test code. It counts as correct only when the finding really is at
  `info` and its message mentions test code/scaffolding; otherwise it counts as false (and is
  listed).
Prints precision per category in each stratum and overall, against the target (>= 0.95 per
category), the files that could not be parsed, and any sampled finding that has no label; then
the same over every finding of the scan that has a label from any draw (several times the
sample, so steadier when a change reshuffles the draw: for comparing two versions of the tool).
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import os
import random
import re
import subprocess
import sys
import tarfile
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
VENV = Path(os.environ.get("BENCH_VENV") or HERE / ".venv-bench")
SOURCES = HERE / ".sources"
PACKAGES = {"torch": "torch==2.13.0", "transformers": "transformers==5.23.0", "diffusers": "diffusers==0.42.1",
            "timm": "timm==1.0.31"}
# Source distributions that ship their tests: (pin, sha256 of the tarball). Only `tests/` is scanned.
SDISTS = {
    "timm": ("timm==1.0.31", "baa0b333339c46d3d6d4965d99b69f5053afed71210e8f433d7ea5ee6a18f0ec"),
    "accelerate": ("accelerate==1.15.0", "5654f8c5eaa0d4fa68b33e287a97765da6849bf6d51dcac874e73fbbddfb6134"),
    "peft": ("peft==0.21.2", "b803ccfb3f3f316004d850284306687833a2235ea278fb56abc856203456142e"),
}
LABELS = HERE / "precision-labels.csv"
SEED = 20261129
PER_CATEGORY = 25
TARGET = 0.95
STRATA = ("non-test", "test")
TEST_WORDS = re.compile(r"\btest (code|scaffolding|file|helper)|scaffolding|\bin a test\b", re.IGNORECASE)


def site_packages() -> Path:
    py = VENV / "bin" / "python"
    if not py.exists():
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
    for name, pin in PACKAGES.items():
        found = subprocess.run([str(py), "-c", f"import importlib.util as u; print(u.find_spec('{name}') is not None)"],
                               check=False, capture_output=True, text=True).stdout.strip()
        if found != "True":
            deps = [] if name == "torch" else ["--no-deps"]
            subprocess.run([str(py), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *deps, pin], check=True)
    out = subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                         capture_output=True, text=True, check=True).stdout.strip()
    return Path(out)


def sdist_tests() -> dict[str, Path]:
    """Each sdist's unpacked folder (`bench/.sources/NAME-VERSION`), fetched when missing."""
    folders = {}
    for name, (pin, sha256) in SDISTS.items():
        version = pin.split("==")[1]
        folder = SOURCES / f"{name}-{version}"
        if not (folder / "tests").is_dir():
            tarball = SOURCES / "download" / f"{name}-{version}.tar.gz"
            if not tarball.exists():
                subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check",
                                "--no-deps", "--no-binary", ":all:", "-d", str(tarball.parent), pin], check=True)
            got = hashlib.sha256(tarball.read_bytes()).hexdigest()
            if got != sha256:
                raise SystemExit(f"{tarball}: sha256 {got}, expected {sha256}")
            with tarfile.open(tarball) as archive:
                archive.extractall(SOURCES, filter="data")
            if not (folder / "tests").is_dir():
                raise SystemExit(f"{tarball}: no tests/ folder in {folder}")
        folders[name] = folder
    return folders


def tool_digest() -> str:
    h = hashlib.sha256(json.dumps([PACKAGES, SDISTS], sort_keys=True).encode())
    for path in sorted((ROOT / "migrator").rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            h.update(path.relative_to(ROOT).as_posix().encode() + b"\0" + path.read_bytes())
    return h.hexdigest()[:16]


def scan(site: Path, sdists: dict[str, Path], rescan: bool) -> dict:
    """Findings and per-tree counts, from the cache file when the key matches."""
    cache = SOURCES / f"scan-{tool_digest()}.json"
    if cache.exists() and not rescan:
        return json.loads(cache.read_text())
    sys.path.insert(0, str(ROOT))
    from migrator import ScanOptions, scan_paths

    trees = [(package, site / package, site) for package in PACKAGES]
    trees += [(f"{name}-sdist", folder / "tests", SOURCES) for name, folder in sdists.items()]
    result = {"trees": [], "findings": []}
    for package, tree, base in trees:
        report = scan_paths([tree], ScanOptions(jobs=2))
        result["trees"].append({"package": package, "path": tree.relative_to(base).as_posix(), "files": report.files,
                                "lines": report.lines, "findings": len(report.findings),
                                "unparsed": sum(1 for f in report.findings if f.rule_id == "NRN000"),
                                "framework": [f.message for f in report.findings if f.rule_id == "NRN002"]})
        for f in report.findings:
            if f.rule_id not in ("NRN000", "NRN002"):  # the tool's own notes: not scanned, PyTorch's own source
                result["findings"].append({"package": package, "path": Path(f.path).relative_to(base).as_posix(),
                                           "line": f.span.line, "rule": f.rule_id, "category": f.category,
                                           "severity": f.severity.value, "is_test": f.is_test, "message": f.message})
    SOURCES.mkdir(exist_ok=True)
    cache.write_text(json.dumps(result))
    return result


def draw(findings: list[dict]) -> dict[str, list[dict]]:
    """Up to PER_CATEGORY findings per category in each stratum, with a fixed seed."""
    pools: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for f in findings:
        pools[(STRATA[f["is_test"]], f["category"])].append(f)
    sample: dict[str, list[dict]] = {s: [] for s in STRATA}
    for (stratum, category), items in sorted(pools.items()):
        items.sort(key=lambda f: (f["package"], f["path"], f["line"], f["rule"], f["message"]))
        rng = random.Random(f"{SEED}:{stratum}:{category}")
        sample[stratum] += rng.sample(items, min(PER_CATEGORY, len(items)))
    return sample


def key(f: dict) -> tuple[str, str, int, str]:
    return f["package"], f["path"], f["line"], f["rule"]


def acceptable_scaffold(f: dict) -> bool:
    return f["severity"] == "info" and bool(TEST_WORDS.search(f["message"]))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dump", action="store_true", help="print the sample with source context")
    parser.add_argument("--unlabelled", action="store_true", help="with --dump: only findings without a label")
    parser.add_argument("--context", type=int, default=3, help="with --dump: lines of context before the line (default 3)")
    parser.add_argument("--rescan", action="store_true", help="scan again even when the cached results match")
    args = parser.parse_args()
    site = site_packages()
    sdists = sdist_tests()
    result = scan(site, sdists, args.rescan)
    bases = {tree["package"]: (site if not tree["package"].endswith("-sdist") else SOURCES) for tree in result["trees"]}
    labels: dict[tuple[str, str, int, str], str] = {}
    with open(LABELS, newline="") as handle:
        for row in csv.DictReader(handle):
            labels[(row["package"], row["path"], int(row["line"]), row["rule"])] = row["label"]
    sample = draw(result["findings"])
    if args.dump:
        for stratum in STRATA:
            for f in sample[stratum]:
                if args.unlabelled and key(f) in labels:
                    continue
                lines = (bases[f["package"]] / f["path"]).read_text(encoding="utf-8", errors="replace").splitlines()
                line = f["line"]
                context = "\n".join(f"    {n + 1:5}{'>' if n + 1 == line else ' '} {lines[n]}"
                                    for n in range(max(0, line - 1 - args.context), min(len(lines), line + 1)))
                print(f"{f['package']},{f['path']},{line},{f['rule']},{f['category']} [{stratum}, {f['severity']}] "
                      f"{f['message']}\n{context}")
        return 0
    for tree in result["trees"]:
        print(f"{tree['package']:16} {tree['path']:22} {tree['files']:5} files {tree['lines']:9,} lines "
              f"{tree['findings']:5} findings {tree['unparsed']} not parsed")
        for note in tree.get("framework", ()):
            print(f"{'':16} NRN002: {note}")
    missing, unaccepted = [], []
    grand = [0, 0]
    for stratum in STRATA:
        pool = sum(1 for f in result["findings"] if STRATA[f["is_test"]] == stratum)
        per: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])  # correct, labelled, of which scaffold
        for f in sample[stratum]:
            label = labels.get(key(f))
            if label is None:
                missing.append((stratum, key(f)))
                continue
            if label not in ("true", "false", "scaffold"):
                raise SystemExit(f"{LABELS}: label {label!r} for {key(f)} (true, false or scaffold)")
            ok = label == "true" or (label == "scaffold" and acceptable_scaffold(f))
            if label == "scaffold" and not ok:
                unaccepted.append((stratum, key(f), f["severity"], f["message"]))
            per[f["category"]][0] += ok
            per[f["category"]][1] += 1
            per[f["category"]][2] += label == "scaffold" and ok
        correct = sum(c for c, _, _ in per.values())
        total = sum(n for _, n, _ in per.values())
        grand[0] += correct
        grand[1] += total
        print(f"\n{stratum} files: {pool} findings, sample {len(sample[stratum])} (seed {SEED}, up to {PER_CATEGORY} "
              f"per category), {sum(1 for s, _ in missing if s == stratum)} unlabelled")
        below = []
        for category, (c, n, scaffold) in sorted(per.items()):
            mark = "" if c / n >= TARGET else "  < target"
            if mark:
                below.append(category)
            extra = f", {scaffold} as test scaffolding at info" if scaffold else ""
            print(f"  {category:13} precision {c / n:.2f} ({c}/{n}{extra}){mark}")
        if total:
            print(f"  {'all':13} precision {correct / total:.3f} ({correct}/{total})  target >= {TARGET} per category: "
                  f"{'met' if not below else 'not met (' + ', '.join(below) + ')'}")
    if grand[1]:
        print(f"\nboth strata: precision {grand[0] / grand[1]:.3f} ({grand[0]}/{grand[1]})")
    scaffolds = sum(1 for s in STRATA for f in sample[s] if labels.get(key(f)) == "scaffold")
    print(f"labels: true, false, scaffold (test scaffolding; correct only at info with a message that says test code): "
          f"{scaffolds} scaffold in the sample")
    for stratum in STRATA:
        wrong: dict[str, int] = defaultdict(int)
        for f in sample[stratum]:
            label = labels.get(key(f))
            if label == "false" or (label == "scaffold" and not acceptable_scaffold(f)):
                wrong[f["rule"]] += 1
        if wrong:
            print(f"false positives in the {stratum} sample by rule: "
                  + ", ".join(f"{rule} {n}" for rule, n in sorted(wrong.items(), key=lambda item: (-item[1], item[0]))))
    # Every finding of this scan that has a label, from any draw: several times the sample, so it
    # moves less when a change reshuffles the draw (the sample above is the measure of record;
    # this is for comparing two versions of the tool on the same labels).
    print("\nevery labelled finding of this scan (labels of all draws; steadier than the sample for before/after):")
    for stratum in STRATA:
        every: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        for f in result["findings"]:
            label = labels.get(key(f))
            if STRATA[f["is_test"]] != stratum or label is None:
                continue
            for category in (f["category"], "all"):
                every[category][0] += label == "true" or (label == "scaffold" and acceptable_scaffold(f))
                every[category][1] += 1
        print(f"  {stratum:9} " + ", ".join(f"{category} {c / n:.2f} ({c}/{n})" for category, (c, n) in
                                               sorted(every.items(), key=lambda item: (item[0] == "all", item[0]))))
    for stratum, k, severity, message in unaccepted:
        print(f"  scaffold label not accepted ({stratum}, {severity}, message without 'test'): {k}: {message}")
    for stratum, k in missing:
        print(f"  unlabelled ({stratum}): {k}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
